// attn's Python module (_attn, wrapped by python/attn/__init__.py): a thin binding of the public
// C++ API (include/attn/) and nothing else. The GIL is released while attn computes; attn::Error
// becomes ValueError, FileNotFoundError or RuntimeError (by its kind) with attn's message.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <attn/attn.h>

#include <atomic>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace py = pybind11;

namespace {

// One Python Translator: the model, and C++ translators by the options they were made with, each
// lent to one call at a time (two Python threads translating at once get one each).
class PyTranslator {
 public:
  PyTranslator(const std::string& model_dir, const std::string& precision, int threads)
      : model_(model_dir, attn::ModelOptions{precision}), threads_(threads) {
    if (threads < 0) throw attn::Error("threads must be >= 0 (0: all cores)", attn::ErrorKind::invalid_argument);
  }

  std::vector<attn::TranslationResult> translate(const std::vector<std::string>& texts,
                                                 attn::TranslationOptions options) {
    options.threads = threads_;
    const std::string key = attn::cache_key(options);
    std::unique_ptr<attn::Translator> translator = borrow(key);
    if (!translator) translator = std::make_unique<attn::Translator>(model_, options);
    std::vector<attn::TranslationResult> results;
    try {
      results = translator->translate(texts);
    } catch (...) {
      give_back(key, std::move(translator));
      throw;
    }
    give_back(key, std::move(translator));
    return results;
  }

  attn::DocumentTranslation translate_document(const std::string& data, attn::TranslationOptions options,
                                               const attn::DocumentOptions& document) {
    options.threads = threads_;
    const std::string key = attn::cache_key(options);
    std::unique_ptr<attn::Translator> translator = borrow(key);
    if (!translator) translator = std::make_unique<attn::Translator>(model_, options);
    attn::DocumentTranslation result;
    try {
      result = translator->translate_document(data, document);
    } catch (...) {
      give_back(key, std::move(translator));
      throw;
    }
    give_back(key, std::move(translator));
    return result;
  }

  std::vector<attn::PairScore> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                     int batch_sentences) {
    return attn::score(model_, sources, targets, batch_sentences, threads_);
  }

  const attn::Model& model() const { return model_; }
  int threads() const { return threads_; }

 private:
  std::unique_ptr<attn::Translator> borrow(const std::string& key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = idle_.find(key);
    if (it == idle_.end()) return nullptr;
    auto t = std::move(it->second);
    idle_.erase(it);
    return t;
  }
  void give_back(const std::string& key, std::unique_ptr<attn::Translator> t) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() > 8) idle_.clear();  // options that keep changing: keep a few
    idle_.emplace(key, std::move(t));
  }

  attn::Model model_;
  int threads_;
  std::mutex mutex_;
  std::multimap<std::string, std::unique_ptr<attn::Translator>> idle_;
};

py::dict attention_arrays(const attn::TranslationResult& r) {
  py::dict out;
  for (const attn::Attention& a : r.attention) {
    py::array_t<float> array({static_cast<py::ssize_t>(a.layers.size()), static_cast<py::ssize_t>(a.heads.size()),
                              static_cast<py::ssize_t>(a.rows), static_cast<py::ssize_t>(a.cols)});
    std::copy(a.weights.begin(), a.weights.end(), array.mutable_data());
    out[py::str(a.kind)] = array;
  }
  return out;
}

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted = true;
  attn::request_training_stop();
}

attn::TrainingSummary train(const std::string& options_json, const std::optional<py::function>& progress, bool resume,
                            bool quiet, bool catch_sigint) {
  std::optional<py::error_already_set> raised;
  attn::TrainingCallback callback;
  if (progress) {
    callback = [&](const attn::TrainingEvent& e) {
      py::gil_scoped_acquire gil;
      try {
        const py::object answer = (*progress)(e);
        return answer.is_none() || answer.cast<bool>();
      } catch (py::error_already_set& error) {
        raised = std::move(error);
        return false;
      }
    };
  }
  g_interrupted = false;
  struct sigaction ours {
  }, before{};
  if (catch_sigint) {  // Ctrl-C: a checkpoint first, then KeyboardInterrupt
    ours.sa_handler = on_sigint;
    sigemptyset(&ours.sa_mask);
    sigaction(SIGINT, &ours, &before);
  }
  attn::TrainingSummary summary;
  try {
    py::gil_scoped_release release;
    summary = attn::train(options_json, callback, resume, quiet);
  } catch (...) {
    if (catch_sigint) sigaction(SIGINT, &before, nullptr);
    throw;
  }
  if (catch_sigint) sigaction(SIGINT, &before, nullptr);
  if (raised) throw std::move(*raised);
  if (g_interrupted) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return summary;
}

}  // namespace

PYBIND11_MODULE(_attn, m) {
  m.doc() = "attn's compiled core; use the package attn.";
  m.attr("__version__") = ATTN_VERSION;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const attn::Error& e) {
      switch (e.kind()) {
        case attn::ErrorKind::invalid_argument:
          PyErr_SetString(PyExc_ValueError, e.what());
          break;
        case attn::ErrorKind::not_found:
          PyErr_SetString(PyExc_FileNotFoundError, e.what());
          break;
        default:
          PyErr_SetString(PyExc_RuntimeError, e.what());
      }
    }
  });

  py::class_<attn::ScoredTranslation>(m, "Hypothesis", "One translation of a sentence with its scores.")
      .def_readonly("text", &attn::ScoredTranslation::text, "the translation")
      .def_readonly("tokens", &attn::ScoredTranslation::tokens, "its subword pieces, without </s>")
      .def_readonly("score", &attn::ScoredTranslation::score,
                    "log_prob / ((5 + len) / 6) ** alpha, len counting </s>: what the search ranks by")
      .def_readonly("log_prob", &attn::ScoredTranslation::log_prob, "log P(tokens + </s> | source)")
      .def("__repr__", [](const attn::ScoredTranslation& h) {
        return "Hypothesis(text=" + py::repr(py::str(h.text)).cast<std::string>() +
               ", score=" + py::repr(py::float_(h.score)).cast<std::string>() + ")";
      });

  py::class_<attn::TranslationResult, attn::ScoredTranslation>(m, "TranslationResult",
                                                               "The translation of one text: the best hypothesis "
                                                               "(text, tokens, score, log_prob) and what was asked.")
      .def_readonly("n_best", &attn::TranslationResult::n_best, "hypotheses, best first (n_best of them)")
      .def_readonly("source_tokens", &attn::TranslationResult::source_tokens,
                    "the input's subword pieces as translated, without </s>")
      .def_readonly("cropped", &attn::TranslationResult::cropped, "the input was longer than max_input_tokens")
      .def_property_readonly("attention", &attention_arrays,
                             "return_attention: {kind: float32 array [layers, heads, target, source]}; target = "
                             "tokens + </s>, source = source_tokens + </s>")
      .def_property_readonly(
          "alignment",
          [](const attn::TranslationResult& r) {
            std::vector<std::pair<int, int>> links;
            for (const auto& l : r.alignment) links.emplace_back(l.source, l.target);
            return links;
          },
          "return_alignment: [(source word, target word)], from 0, words split at spaces")
      .def("__repr__", [](const attn::TranslationResult& r) {
        return "TranslationResult(text=" + py::repr(py::str(r.text)).cast<std::string>() +
               ", score=" + py::repr(py::float_(r.score)).cast<std::string>() + ")";
      });

  py::class_<attn::PairScore>(m, "PairScore", "The model's log-probability of a given translation.")
      .def_readonly("log_prob", &attn::PairScore::log_prob, "log P(target + </s> | source)")
      .def_readonly("tokens", &attn::PairScore::tokens, "the target's subword pieces, </s> included")
      .def_readonly("perplexity", &attn::PairScore::perplexity, "exp(-log_prob / tokens)")
      .def("__repr__", [](const attn::PairScore& s) {
        return "PairScore(log_prob=" + py::repr(py::float_(s.log_prob)).cast<std::string>() +
               ", tokens=" + std::to_string(s.tokens) + ")";
      });

  py::class_<PyTranslator>(m, "_Translator")
      .def(py::init<const std::string&, const std::string&, int>(), py::arg("model_dir"), py::arg("precision"),
           py::arg("threads"), py::call_guard<py::gil_scoped_release>())
      .def(
          "translate",
          [](PyTranslator& t, const std::vector<std::string>& texts, int beam, float alpha, int n_best,
             float max_length_a, int max_length_b, int min_length, int batch_tokens, int max_batch_sentences,
             int max_input_tokens, bool return_attention, const std::vector<std::string>& attention_kinds,
             const std::vector<int>& attention_layers, const std::vector<int>& attention_heads, bool return_alignment,
             int alignment_layer, int alignment_head, double alignment_threshold, const std::string& shortlist,
             int shortlist_k) {
            attn::TranslationOptions o;
            o.search.beam_size = beam;
            o.search.length_penalty = alpha;
            o.search.n_best = n_best;
            o.search.max_length_a = max_length_a;
            o.search.max_length_b = max_length_b;
            o.search.min_length = min_length;
            o.batch_tokens = batch_tokens;
            o.max_batch_sentences = max_batch_sentences;
            o.max_input_tokens = max_input_tokens;
            o.return_attention = return_attention;
            o.attention_kinds = attention_kinds;
            o.attention_layers = attention_layers;
            o.attention_heads = attention_heads;
            o.return_alignment = return_alignment;
            o.alignment_layer = alignment_layer;
            o.alignment_head = alignment_head;
            o.alignment_threshold = alignment_threshold;
            o.shortlist = shortlist;
            o.shortlist_k = shortlist_k;
            return t.translate(texts, o);
          },
          py::call_guard<py::gil_scoped_release>())
      .def("translate_document",
           [](PyTranslator& t, const py::bytes& data, const std::string& format, const std::string& source_language,
              int beam, float alpha, float max_length_a, int max_length_b, int min_length, int batch_tokens,
              int max_batch_sentences, const std::string& shortlist, int shortlist_k) {
             std::string bytes = data;  // copied with the GIL held
             py::gil_scoped_release release;
             attn::TranslationOptions o;
             o.search.beam_size = beam;
             o.search.length_penalty = alpha;
             o.search.max_length_a = max_length_a;
             o.search.max_length_b = max_length_b;
             o.search.min_length = min_length;
             o.batch_tokens = batch_tokens;
             o.max_batch_sentences = max_batch_sentences;
             o.shortlist = shortlist;
             o.shortlist_k = shortlist_k;
             attn::DocumentTranslation r = t.translate_document(bytes, o, {format, source_language});
             py::gil_scoped_acquire gil;
             return py::make_tuple(py::bytes(r.data), r.warnings, r.sentences);
           })
      .def("score", &PyTranslator::score, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("model_dir", [](const PyTranslator& t) { return t.model().directory(); })
      .def_property_readonly("precision", [](const PyTranslator& t) { return t.model().precision(); })
      .def_property_readonly("threads", &PyTranslator::threads)
      .def_property_readonly("parameters", [](const PyTranslator& t) { return t.model().parameters(); })
      .def_property_readonly("vocabulary_size", [](const PyTranslator& t) { return t.model().vocabulary_size(); })
      .def_property_readonly("max_input_tokens", [](const PyTranslator& t) { return t.model().max_input_tokens(); })
      .def_property_readonly("source_language", [](const PyTranslator& t) { return t.model().source_language(); })
      .def_property_readonly("target_language", [](const PyTranslator& t) { return t.model().target_language(); });

  py::class_<attn::Vocabulary>(m, "_Vocabulary")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("encode", &attn::Vocabulary::encode)
      .def("pieces", &attn::Vocabulary::pieces)
      .def("decode", &attn::Vocabulary::decode)
      .def("decode_pieces", &attn::Vocabulary::decode_pieces)
      .def("piece", &attn::Vocabulary::piece)
      .def("size", &attn::Vocabulary::size);

  py::class_<attn::MetricScore>(m, "MetricScore", "A corpus score as sacreBLEU computes and prints it.")
      .def_readonly("score", &attn::MetricScore::score, "0-100")
      .def_readonly("text", &attn::MetricScore::text, "as sacreBLEU prints it, e.g. 'BLEU = 48.53 82.4/50.0/...'")
      .def_readonly("signature", &attn::MetricScore::signature, "sacreBLEU's signature")
      .def("__float__", [](const attn::MetricScore& s) { return s.score; })
      .def("__repr__", [](const attn::MetricScore& s) { return s.text; });

  m.def(
      "_bleu",
      [](const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
         bool lowercase, const std::string& tokenize) {
        return attn::bleu(hypotheses, references, {lowercase, tokenize});
      },
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "_chrf",
      [](const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
         int word_order, bool lowercase) {
        return attn::chrf(hypotheses, references, {word_order, lowercase});
      },
      py::call_guard<py::gil_scoped_release>());

  py::class_<attn::TrainingEvent>(m, "TrainingEvent", "One record of the run's train.jsonl.")
      .def_readonly("type", &attn::TrainingEvent::type, "'train' (progress) or 'valid' (a validation)")
      .def_readonly("step", &attn::TrainingEvent::step, "updates so far")
      .def_readonly("epoch", &attn::TrainingEvent::epoch, "from 1 ('train' records)")
      .def_readonly("loss", &attn::TrainingEvent::loss, "'train': label-smoothed loss; 'valid': dev cross-entropy")
      .def_readonly("perplexity", &attn::TrainingEvent::perplexity)
      .def_readonly("learning_rate", &attn::TrainingEvent::learning_rate)
      .def_readonly("tokens_per_second", &attn::TrainingEvent::tokens_per_second)
      .def_readonly("elapsed_seconds", &attn::TrainingEvent::elapsed_seconds)
      .def_readonly("json", &attn::TrainingEvent::json, "the whole record, as written")
      .def("__repr__", [](const attn::TrainingEvent& e) { return "TrainingEvent(" + e.json + ")"; });

  py::class_<attn::TrainingSummary>(m, "TrainingSummary", "How a training ended.")
      .def_readonly("steps", &attn::TrainingSummary::steps)
      .def_readonly("epochs", &attn::TrainingSummary::epochs)
      .def_readonly("stop_reason", &attn::TrainingSummary::stop_reason)
      .def_readonly("model_dir", &attn::TrainingSummary::model_directory)
      .def_readonly("best_valid_loss", &attn::TrainingSummary::best_valid_loss)
      .def("__repr__", [](const attn::TrainingSummary& s) {
        return "TrainingSummary(steps=" + std::to_string(s.steps) + ", stop_reason='" + s.stop_reason + "')";
      });

  m.def(
      "_detect_language",
      [](const std::string& text, const std::vector<std::string>& languages) {
        std::vector<std::pair<std::string, double>> out;
        for (const auto& d : attn::detect_language(text, languages)) out.emplace_back(d.language, d.confidence);
        return out;
      },
      py::call_guard<py::gil_scoped_release>());
  m.def("_train", &train, py::arg("options_json"), py::arg("progress"), py::arg("resume"), py::arg("quiet"),
        py::arg("catch_sigint"));
  m.def("request_training_stop", &attn::request_training_stop,
        "Asks the training in progress to stop after its current update, with a checkpoint.");
}
