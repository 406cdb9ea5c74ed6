// The MPI communicator (Open MPI from Debian's libopenmpi-dev), and how a process learns whether
// it was started as one of several ranks.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/bfloat16.h"
#include "train/dist/communicator.h"

#ifdef ATTN_HAVE_MPI
#include <mpi.h>
#endif

namespace attn::dist {
namespace {

// The rank count an MPI launcher announced in the environment (Open MPI, PMI/PMIx, MPICH's
// Hydra), or 0 when none did.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  }
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) return 1;  // size unknown, but launched
  return 0;
}

#ifdef ATTN_HAVE_MPI
// "MPI: <what> failed: <MPI's text for rc>".
std::string mpi_error(int rc, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return std::string("MPI: ") + what + " failed: " + std::string(text, static_cast<std::size_t>(length));
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(mpi_error(rc, what));
}

// MPI counts are ints: long buffers go in pieces.
constexpr std::size_t kPiece = std::size_t{1} << 30;

// bfloat16 on the wire (WirePrecision::bf16): core/bfloat16.h's rounding (to nearest even; a NaN
// stays a NaN; subnormals kept, unlike the CPU instruction's), and back exactly.
std::uint16_t bf16_of(float x) { return bf16_nearest_even(x); }
float float_of(std::uint16_t b) { return float_of_bf16(b); }
void round_to_wire(const float* x, std::size_t n, std::uint16_t* w) {
  for (std::size_t i = 0; i < n; ++i) w[i] = bf16_of(x[i]);
}
void widen_from_wire(const std::uint16_t* w, std::size_t n, float* x) {
  for (std::size_t i = 0; i < n; ++i) x[i] = float_of(w[i]);
}
// MPI's reduction of two bf16 buffers: each pair summed in float32 (exact for two bf16 values
// within 2^16 of each other's exponent, else one rounding), the sum rounded to bf16. Commutative:
// a + b and b + a are the same float.
void bf16_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = bf16_of(float_of(a[i]) + float_of(b[i]));
}

class Mpi final : public Communicator {
 public:
  Mpi() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      // SERIALIZED: the nonblocking sums are moved on by a thread of their own while the main
      // thread computes; the two never call MPI at the same time (see SumThread).
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
      owner_ = true;
    }
    int provided = 0;
    MPI_Query_thread(&provided);
    threaded_ = provided >= MPI_THREAD_SERIALIZED;
    // Errors come back as codes (and become exceptions) instead of ending the process silently.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    check(MPI_Op_create(&bf16_sum, /*commute=*/1, &bf16_sum_), "MPI_Op_create");
  }
  ~Mpi() override {
    sums_.reset();  // the thread ends before MPI does
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Op_free(&bf16_sum_);
    if (owner_ && !finalised) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string description() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string v(version, static_cast<std::size_t>(length));
    if (const auto comma = v.find(','); comma != std::string::npos) v.resize(comma);
    return "MPI (" + v + ")";
  }
  void sum(float* data, std::size_t n, WirePrecision wire) override {
    if (wire == WirePrecision::fp32) return reduce(data, n, MPI_FLOAT);
    std::vector<std::uint16_t> w(n);
    round_to_wire(data, n, w.data());
    for (std::size_t done = 0; done < n; done += kPiece)
      check(MPI_Allreduce(MPI_IN_PLACE, w.data() + done, static_cast<int>(std::min(kPiece, n - done)), MPI_UINT16_T,
                          bf16_sum_, MPI_COMM_WORLD),
            "MPI_Allreduce");
    widen_from_wire(w.data(), n, data);
  }
  void sum(double* data, std::size_t n) override { reduce(data, n, MPI_DOUBLE); }
  void sum(std::int64_t* data, std::size_t n) override { reduce(data, n, MPI_INT64_T); }
  void start_sum(float* data, std::size_t n, WirePrecision wire) override {
    if (!threaded_) {  // an MPI without MPI_THREAD_SERIALIZED: the sum at once, nothing hidden
      sum(data, n, wire);
      return;
    }
    if (!sums_) sums_ = std::make_unique<SumThread>(bf16_sum_);
    for (std::size_t done = 0; done < n; done += kPiece) sums_->start(data + done, std::min(kPiece, n - done), wire);
  }
  void wait_sums() override {
    if (sums_) sums_->wait();
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    auto* p = static_cast<char*>(data);
    for (std::size_t done = 0; done < bytes; done += kPiece)
      check(MPI_Bcast(p + done, static_cast<int>(std::min(kPiece, bytes - done)), MPI_BYTE, root, MPI_COMM_WORLD),
            "MPI_Bcast");
  }
  std::vector<std::string> gather_all(const std::string& mine) override {
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    const int length = static_cast<int>(mine.size());
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<int> offsets(lengths.size(), 0);
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    return out;
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  template <class T>
  void reduce(T* data, std::size_t n, MPI_Datatype type) {
    for (std::size_t done = 0; done < n; done += kPiece)
      check(MPI_Allreduce(MPI_IN_PLACE, data + done, static_cast<int>(std::min(kPiece, n - done)), type, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
  }

  // Open MPI moves a nonblocking collective on only inside its own calls: this thread starts the
  // sums the main thread hands it and tests them every kPoll until they are done, so that they go
  // out while the main thread computes, sleeping in between (a rank may have one core only). The
  // main thread calls no MPI function from its first start() to the end of its wait(), and the
  // thread none outside that span: MPI_THREAD_SERIALIZED.
  class SumThread {
   public:
    explicit SumThread(MPI_Op bf16_sum) : bf16_sum_(bf16_sum), thread_([this] { loop(); }) {}
    ~SumThread() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      wake_.notify_all();
      thread_.join();
    }
    void start(float* data, std::size_t n, WirePrecision wire) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        queued_.push_back({data, n, wire});
        ++pending_;
      }
      wake_.notify_all();
    }
    // Until every sum started is done; throws the first MPI error one met.
    void wait() {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return pending_ == 0; });
      if (!error_.empty()) {
        const std::string e = std::move(error_);
        error_.clear();
        throw Error(e);
      }
    }

   private:
    static constexpr auto kPoll = std::chrono::microseconds(500);
    struct Sum {
      float* data;
      std::size_t n;
      WirePrecision wire;
    };
    // A sum under way in bf16: its buffer on the wire, widened back into data when all are done.
    struct OnTheWire {
      float* data;
      std::vector<std::uint16_t> wire;
    };
    void loop() {
      std::vector<MPI_Request> requests;
      std::vector<OnTheWire> bf16;
      std::unique_lock<std::mutex> lock(mutex_);
      for (;;) {
        wake_.wait(lock, [&] { return stop_ || !queued_.empty(); });
        if (stop_) return;
        while (pending_ > 0) {
          const auto starting = std::move(queued_);
          queued_.clear();
          lock.unlock();
          std::string error;
          for (const Sum& s : starting) {
            requests.push_back(MPI_REQUEST_NULL);
            int rc = MPI_SUCCESS;
            if (s.wire == WirePrecision::fp32) {
              rc = MPI_Iallreduce(MPI_IN_PLACE, s.data, static_cast<int>(s.n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                  &requests.back());
            } else {
              bf16.push_back({s.data, std::vector<std::uint16_t>(s.n)});
              round_to_wire(s.data, s.n, bf16.back().wire.data());
              rc = MPI_Iallreduce(MPI_IN_PLACE, bf16.back().wire.data(), static_cast<int>(s.n), MPI_UINT16_T, bf16_sum_,
                                  MPI_COMM_WORLD, &requests.back());
            }
            if (rc != MPI_SUCCESS && error.empty()) error = mpi_error(rc, "MPI_Iallreduce");
          }
          int all = 0;
          const int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &all, MPI_STATUSES_IGNORE);
          if (rc != MPI_SUCCESS && error.empty()) error = mpi_error(rc, "MPI_Testall");
          const bool finished = all || !error.empty();
          if (finished) {
            requests.clear();
            if (error.empty())
              for (const OnTheWire& w : bf16) widen_from_wire(w.wire.data(), w.wire.size(), w.data);
            bf16.clear();
          }
          lock.lock();
          if (!error.empty() && error_.empty()) error_ = error;
          if (finished && queued_.empty()) {
            pending_ = 0;
            done_.notify_all();
            break;
          }
          if (finished) continue;  // more were handed over meanwhile
          lock.unlock();
          std::this_thread::sleep_for(kPoll);
          lock.lock();
        }
      }
    }
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    MPI_Op bf16_sum_;
    std::vector<Sum> queued_;  // handed over, not yet started
    int pending_ = 0;          // handed over since the last wait, not yet done
    bool stop_ = false;
    std::string error_;
    std::thread thread_;
  };

  int rank_ = 0, size_ = 1;
  bool owner_ = false;
  bool threaded_ = false;            // MPI_THREAD_SERIALIZED: the sums move on in a thread
  MPI_Op bf16_sum_ = MPI_OP_NULL;    // WirePrecision::bf16's reduction
  std::unique_ptr<SumThread> sums_;  // started with the first nonblocking sum
};
#endif

}  // namespace

std::unique_ptr<Communicator> world() {
  const int launched = launcher_size();
  if (launched == 0) return single_process();
#ifdef ATTN_HAVE_MPI
  return std::make_unique<Mpi>();
#else
  if (launched > 1)
    throw Error("started as one of " + std::to_string(launched) +
                " ranks, but this attn was built without MPI (configure with -DATTN_MPI=ON and Debian's "
                "libopenmpi-dev to train across processes)");
  return single_process();
#endif
}

}  // namespace attn::dist
