#pragma once
// The one worker that owns the models and translates what concurrent requests queue up. Each
// request's sentences wait in one queue (in arrival order); when the worker is free it takes the
// oldest sentence and, from every request that asks the same model with the same options, the
// queued sentences of the closest lengths, up to the batch budget (the rule of attn translate's
// batches: sentences × (longest + 1) <= batch_tokens), waiting at most BatchOptions::wait_ms for
// company. A batch is translated by the same BatchTranslator::translate_ids as `attn translate`.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "decode/model_directory.h"
#include "decode/batch_translator.h"
#include "serve/metrics.h"
#include "serve/serve_options.h"

namespace attn::serve {

struct ServedModel {
  ModelSpec spec;
  LoadedModel loaded;
  std::shared_ptr<const Shortlist> shortlist;  // spec.shortlist, loaded (null: none)
};

// What a request asks of its sentences; requests with equal keys share batches.
struct JobOptions {
  SearchOptions search;
  bool export_attention = false;
  AttentionSelection attention;
  std::string key() const;
};

struct SentenceResult {
  std::vector<Hypothesis> n_best;                   // best first; empty for an empty source
  std::vector<inspect::AttentionMatrix> attention;  // with export_attention: the best hypothesis'
};

using Clock = std::chrono::steady_clock;

class TranslationQueue {
 public:
  // Loads the models of `specs` into `models` on the worker thread, so that every OpenMP region of
  // the process runs on that one thread: libgomp then keeps its team spinning between the many
  // small parallel regions of decoding. (With a second thread's team alive, it counts more threads
  // than cores and makes them sleep and wake at every region: 2-thread decoding ran 1.2x, not 1.6x,
  // faster than 1-thread.) Throws the loading error (Error naming the folder and file).
  TranslationQueue(std::vector<ServedModel>& models, const std::vector<ModelSpec>& specs, BatchOptions batching,
                   int max_queue, int threads, Metrics& metrics);
  ~TranslationQueue();
  TranslationQueue(const TranslationQueue&) = delete;
  TranslationQueue& operator=(const TranslationQueue&) = delete;

  // Translates `sources` (ids without EOS, each within the model's length) with model `model`;
  // blocks until done. Throws ApiError: 429 when the queue cannot take them, 503 when the deadline
  // passes first (the sentences are then dropped) or the queue is stopping, 500 when translation
  // failed.
  std::vector<SentenceResult> translate(int model, const JobOptions& options,
                                        std::vector<std::vector<std::int32_t>> sources, Clock::time_point deadline);
  // Runs `task` on the worker, in turn with the batches (forced decoding needs the model alone).
  void run(int model, const std::function<void(Transformer&)>& task, Clock::time_point deadline);

  // Takes no more work, finishes what is queued, and joins the worker.
  void stop();
  // From now on a batch starts at once, without waiting for company: a shutdown that lets the
  // queued sentences finish does not also wait out the batching wait.
  void stop_waiting();
  int queued_sentences() const;

 private:
  struct Job;
  struct Item {
    std::shared_ptr<Job> job;
    std::size_t index = 0;  // the sentence within the job
  };
  void work();
  void translate_batch(std::unique_lock<std::mutex>& lock);
  BatchTranslator& translator(int model, const JobOptions& options);
  void wait(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Job>& job, Clock::time_point deadline);

  std::vector<ServedModel>& models_;
  BatchOptions batching_;
  int max_queue_;
  int threads_;
  Metrics& metrics_;
  std::map<std::pair<int, std::string>, std::unique_ptr<BatchTranslator>> translators_;  // by (model, options key)

  mutable std::mutex mutex_;
  std::condition_variable work_ready_, job_done_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  bool stop_waiting_ = false;  // see stop_waiting()
  std::thread worker_;
};

}  // namespace attn::serve
