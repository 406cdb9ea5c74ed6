#pragma once
// The service's queue as the SentenceTranslator of documents (document/document_translation.h): a
// document's sentences go into the queue as one job and share batches with every other request;
// those with markup to place come back with their word alignment, read off the cross-attention of
// the model's default alignment layer.
#include "document/document_translation.h"
#include "serve/translation_queue.h"

namespace attn::serve {

// `job`'s search options apply (n_best is taken as 1). The translator holds references: it lives
// as long as the request.
document::SentenceTranslator queue_sentences(TranslationQueue& queue, int model, const ServedModel& served,
                                             const JobOptions& job, Clock::time_point deadline);

// The document options that go with a served model: its source language's sentence rules (or
// `language`'s), sentences cut at its input limit.
document::DocumentOptions served_document_options(const ServedModel& served, const std::string& language);

}  // namespace attn::serve
