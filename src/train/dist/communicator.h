#pragma once
// The processes of one training job and what they say to each other: synchronous data
// parallelism needs only sums of buffers, broadcasts from one rank and a way to end the whole job.
// `attn train` started by mpirun (or another MPI launcher) gets MPI's world; started alone, a
// single process whose collectives do nothing. The Backend knows nothing of this: ranks exchange
// host buffers between updates, on the training floor.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

namespace attn::dist {

// How a sum of floats travels between the ranks. fp32: as it is. bf16: each rank's buffer rounded to
// bfloat16 (to nearest even) before it is sent and every partial sum rounded to bfloat16 again
// (summed in float32, then rounded): half the bytes on the wire, for a gradient's relative
// precision of about 2^-8 per rounding (one with 2 ranks, up to N - 1 with N), as PyTorch DDP's
// bf16_compress_hook sends gradients. The sum comes back as float32 (the bf16 values, exactly) and
// with the same bits on every rank.
enum class WirePrecision { fp32, bf16 };
// "fp32" or "bf16".
const char* to_string(WirePrecision wire);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "single process" or the MPI library's name and version.
  virtual std::string description() const = 0;

  // Element-wise sums over all ranks, in place. Every rank gets the same bits (MPI's reductions
  // are deterministic for a given rank count and buffer size; the trainer also checks). Floats go
  // as `wire` says (with one rank nothing is sent, nothing rounded).
  virtual void sum(float* data, std::size_t n, WirePrecision wire) = 0;
  virtual void sum(double* data, std::size_t n) = 0;
  virtual void sum(std::int64_t* data, std::size_t n) = 0;
  // The same sum of floats without waiting for it (MPI_Iallreduce, moved on by a thread of the
  // communicator's while the caller computes): the buffer is the sum's until wait_sums() returns,
  // and must not be read or written before; the caller calls no other collective in between. Sums
  // started in the same order on every rank; each element gets the bits the blocking sum() gives it
  // (the same reduction of the same values; tested with 2 ranks).
  virtual void start_sum(float* data, std::size_t n, WirePrecision wire) = 0;
  // Waits for every sum started.
  virtual void wait_sums() = 0;
  // root's bytes onto every rank's buffer of the same size.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  // Every rank's string, in rank order, on every rank.
  virtual std::vector<std::string> gather_all(const std::string& mine) = 0;
  // Ends every process of the job with `code`: for an error one rank meets alone while the
  // others may be waiting for it in a collective (they would otherwise wait forever).
  [[noreturn]] virtual void abort(int code) = 0;
};

// An error every rank of the job raised together (each knows the whole story), so each can
// exit normally; rank 0 reports it.
class JobError : public Error {
 public:
  using Error::Error;
};

std::unique_ptr<Communicator> single_process();

// The ranks this process was started with: MPI's world under an MPI launcher (MPI is initialised
// here and finalised when the communicator goes), a single process otherwise. A build without MPI
// started as one of several ranks throws Error saying so.
std::unique_ptr<Communicator> world();

// A string from root onto every rank.
void broadcast(Communicator& c, std::string& text, int root);

// Runs `step` on every rank. If it throws on any rank, every rank throws a JobError naming the
// ranks and their messages ("rank 1: ...; rank 0: ..."). With one rank the original exception
// passes through unchanged.
template <class F>
void on_every_rank(Communicator& c, F&& step);

std::string collect_errors(Communicator& c, const std::string& mine);  // "" when no rank failed

template <class F>
void on_every_rank(Communicator& c, F&& step) {
  if (c.size() == 1) {
    step();
    return;
  }
  std::string error;
  try {
    step();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  }
  if (const std::string all = collect_errors(c, error); !all.empty()) throw JobError(all);
}

}  // namespace attn::dist
