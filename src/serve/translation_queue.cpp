#include "serve/translation_queue.h"

#include <omp.h>

#include <algorithm>
#include <future>

#include "decode/search_options.h"
#include "serve/api_error.h"

namespace attn::serve {

struct TranslationQueue::Job {
  int model = 0;
  std::string key;
  JobOptions options;
  std::vector<std::vector<std::int32_t>> sources;
  std::vector<SentenceResult> results;
  std::size_t remaining = 0;
  std::function<void(Transformer&)> task;  // instead of sentences
  Clock::time_point arrived;
  std::string error;  // translation failed
};

std::string JobOptions::key() const {
  // Every member, by position: a member added to JobOptions stops this from compiling.
  const auto& [search_options, attention_wanted, selection] = *this;
  std::string k = cache_key(search_options);
  if (attention_wanted) k += " attention " + cache_key(selection);
  return k;
}

TranslationQueue::TranslationQueue(std::vector<ServedModel>& models, const std::vector<ModelSpec>& specs,
                                   BatchOptions batching, int max_queue, int threads, Metrics& metrics)
    : models_(models), batching_(batching), max_queue_(max_queue), threads_(threads), metrics_(metrics) {
  auto loaded = std::make_shared<std::promise<void>>();
  std::future<void> ready = loaded->get_future();
  worker_ = std::thread([this, specs, loaded] {
    if (threads_ > 0) omp_set_num_threads(threads_);  // per thread: set in the thread that runs the products
    try {
      for (const ModelSpec& spec : specs) {
        ServedModel m{spec, load_model_directory(spec.dir, spec.precision), nullptr};
        if (!spec.shortlist.empty())
          m.shortlist = std::make_shared<const Shortlist>(Shortlist::load(spec.shortlist, *m.loaded.vocabulary));
        models_.push_back(std::move(m));
      }
      loaded->set_value();
    } catch (...) {
      loaded->set_exception(std::current_exception());
      return;
    }
    work();
  });
  try {
    ready.get();
  } catch (...) {
    worker_.join();
    throw;
  }
}

TranslationQueue::~TranslationQueue() { stop(); }

void TranslationQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void TranslationQueue::stop_waiting() {
  {
    std::lock_guard lock(mutex_);
    stop_waiting_ = true;
  }
  work_ready_.notify_all();
}

int TranslationQueue::queued_sentences() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(queue_.size());
}

void TranslationQueue::wait(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Job>& job,
                            Clock::time_point deadline) {
  if (!job_done_.wait_until(lock, deadline, [&] { return job->remaining == 0; })) {
    // Its requester gives up: what still waits is dropped now (a batch already running it finishes).
    std::erase_if(queue_, [&](const Item& item) { return item.job == job; });
    const double waited = std::chrono::duration<double>(Clock::now() - job->arrived).count();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", waited);
    throw ApiError(503, std::string("Timed out: the request was not translated within its time limit (") + seconds +
                            " s); the server is busy, retry later");
  }
  if (!job->error.empty()) throw ApiError(500, "Cannot translate text: " + job->error);
}

std::vector<SentenceResult> TranslationQueue::translate(int model, const JobOptions& options,
                                                        std::vector<std::vector<std::int32_t>> sources,
                                                        Clock::time_point deadline) {
  auto job = std::make_shared<Job>();
  job->model = model;
  job->options = options;
  job->key = options.key();
  job->sources = std::move(sources);
  job->results.resize(job->sources.size());
  job->arrived = Clock::now();
  std::unique_lock lock(mutex_);
  if (stopping_) throw ApiError(503, "The server is shutting down");
  std::size_t queued = 0;
  for (const auto& s : job->sources) queued += !s.empty();
  if (queued > static_cast<std::size_t>(max_queue_))
    throw ApiError(400, "Invalid request: " + std::to_string(queued) + " sentences, more than the queue holds (" +
                            std::to_string(max_queue_) + ")");
  if (queue_.size() + queued > static_cast<std::size_t>(max_queue_))
    throw ApiError(429, "Slowdown: the translation queue is full (" + std::to_string(queue_.size()) +
                            " sentences waiting, at most " + std::to_string(max_queue_) + "); retry later");
  for (std::size_t i = 0; i < job->sources.size(); ++i)
    if (!job->sources[i].empty()) {  // an empty source translates to nothing, as in attn translate
      queue_.push_back({job, i});
      ++job->remaining;
    }
  if (job->remaining == 0) return std::move(job->results);
  work_ready_.notify_one();
  wait(lock, job, deadline);
  return std::move(job->results);
}

void TranslationQueue::run(int model, const std::function<void(Transformer&)>& task, Clock::time_point deadline) {
  auto job = std::make_shared<Job>();
  job->model = model;
  job->task = task;
  job->remaining = 1;
  job->arrived = Clock::now();
  std::unique_lock lock(mutex_);
  if (stopping_) throw ApiError(503, "The server is shutting down");
  if (queue_.size() + 1 > static_cast<std::size_t>(max_queue_))
    throw ApiError(
        429, "Slowdown: the queue is full (" + std::to_string(queue_.size()) + " sentences waiting); retry later");
  queue_.push_back({job, 0});
  work_ready_.notify_one();
  wait(lock, job, deadline);
}

BatchTranslator& TranslationQueue::translator(int model, const JobOptions& options) {
  const auto key = std::make_pair(model, options.key());
  auto it = translators_.find(key);
  if (it == translators_.end()) {
    if (translators_.size() >= 32) translators_.clear();  // many distinct options: each holds decoding buffers
    BatchTranslatorOptions t;
    t.search = options.search;
    t.batch_tokens = batching_.batch_tokens;
    t.max_batch_sentences = batching_.max_batch_sentences;
    t.export_attention = options.export_attention;
    t.attention = options.attention;
    const ServedModel& m = models_[static_cast<std::size_t>(model)];
    t.shortlist = m.shortlist;
    t.shortlist_k = m.spec.shortlist_k;
    it = translators_.emplace(key, std::make_unique<BatchTranslator>(*m.loaded.model, *m.loaded.vocabulary, t)).first;
  }
  return *it->second;
}

void TranslationQueue::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    const std::shared_ptr<Job> oldest = queue_.front().job;
    if (oldest->task) {
      queue_.pop_front();
      lock.unlock();
      std::string error;
      try {
        oldest->task(*models_[static_cast<std::size_t>(oldest->model)].loaded.model);
      } catch (const std::exception& e) {
        error = e.what();
      }
      lock.lock();
      oldest->error = error;
      oldest->remaining = 0;
      job_done_.notify_all();
      continue;
    }
    try {
      translate_batch(lock);
    } catch (const std::exception& e) {  // out of memory while forming a batch: fail its oldest request, go on
      if (!lock.owns_lock()) lock.lock();
      if (!queue_.empty()) {
        const std::shared_ptr<Job> failed = queue_.front().job;
        failed->error = e.what();
        std::erase_if(queue_, [&](const Item& item) { return item.job == failed; });
        failed->remaining = 0;
        job_done_.notify_all();
      }
    }
  }
}

void TranslationQueue::translate_batch(std::unique_lock<std::mutex>& lock) {
  const std::shared_ptr<Job> oldest = queue_.front().job;
  const auto compatible = [&](const Item& item) {
    return !item.job->task && item.job->model == oldest->model && item.job->key == oldest->key;
  };
  // Wait for company unless a batch is full: at most wait_ms after the oldest sentence arrived or
  // the worker became free, whichever is later. (Under load the clients just answered send their
  // next requests within milliseconds: without the wait, batches would alternate between full and
  // the few sentences left over.)
  const auto until = std::max(oldest->arrived, Clock::now()) + std::chrono::milliseconds(batching_.wait_ms);
  BatchStart start = BatchStart::timer;
  while (true) {
    std::size_t n = 0, tokens = 0;
    for (const Item& item : queue_)
      if (compatible(item)) {
        ++n;
        tokens += item.job->sources[item.index].size() + 1;
      }
    if (n >= static_cast<std::size_t>(batching_.max_batch_sentences) ||
        tokens >= static_cast<std::size_t>(batching_.batch_tokens)) {
      start = BatchStart::full;
      break;
    }
    if (stopping_ || stop_waiting_) {
      start = BatchStart::shutdown;
      break;
    }
    if (Clock::now() >= until) break;
    work_ready_.wait_until(lock, until);
  }
  if (queue_.empty() || queue_.front().job != oldest) return;  // its requester gave up meanwhile: look again
  // Candidates longest first; the batch is the window around the oldest sentence that fits.
  std::vector<std::size_t> candidates;  // positions in queue_
  for (std::size_t p = 0; p < queue_.size(); ++p)
    if (compatible(queue_[p])) candidates.push_back(p);
  const auto length = [&](std::size_t p) { return queue_[p].job->sources[queue_[p].index].size(); };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](std::size_t a, std::size_t b) { return length(a) > length(b); });
  const std::size_t at =
      static_cast<std::size_t>(std::find(candidates.begin(), candidates.end(), 0) - candidates.begin());
  std::size_t first = at, last = at + 1;  // [first, last) in candidates
  const auto fits = [&](std::size_t f, std::size_t l) {
    return l - f <= static_cast<std::size_t>(batching_.max_batch_sentences) &&
           (l - f) * (length(candidates[f]) + 1) <= static_cast<std::size_t>(batching_.batch_tokens);
  };
  while (last < candidates.size() && fits(first, last + 1)) ++last;  // shorter ones cost no extra padding
  while (first > 0 && fits(first - 1, last)) --first;
  std::vector<std::size_t> chosen(candidates.begin() + static_cast<std::ptrdiff_t>(first),
                                  candidates.begin() + static_cast<std::ptrdiff_t>(last));
  std::vector<Item> items;
  std::vector<std::vector<std::int32_t>> sources;
  for (std::size_t p : chosen) {
    items.push_back(queue_[p]);
    sources.push_back(queue_[p].job->sources[queue_[p].index]);
  }
  std::sort(chosen.begin(), chosen.end());
  for (auto it = chosen.rbegin(); it != chosen.rend(); ++it)
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(*it));
  const int model = oldest->model;
  const JobOptions options = oldest->options;
  lock.unlock();

  const auto t0 = Clock::now();
  std::vector<std::vector<Hypothesis>> hypotheses;
  std::vector<std::vector<inspect::AttentionMatrix>> attention;
  std::string error;
  try {
    BatchTranslator& t = translator(model, options);
    hypotheses = t.translate_ids(sources, options.export_attention ? &attention : nullptr);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::int64_t source_tokens = 0, target_tokens = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    source_tokens += static_cast<std::int64_t>(sources[i].size()) + 1;
    if (error.empty() && !hypotheses[i].empty())
      target_tokens += static_cast<std::int64_t>(hypotheses[i][0].tokens.size()) + 1;
  }
  metrics_.batch(models_[static_cast<std::size_t>(model)].spec.id(), start, static_cast<int>(sources.size()),
                 source_tokens, target_tokens, seconds);

  lock.lock();
  for (std::size_t i = 0; i < items.size(); ++i) {
    Job& job = *items[i].job;
    if (!error.empty()) {
      job.error = error;
    } else {
      job.results[items[i].index].n_best = std::move(hypotheses[i]);
      if (options.export_attention) job.results[items[i].index].attention = std::move(attention[i]);
    }
    --job.remaining;
  }
  job_done_.notify_all();
}

}  // namespace attn::serve
