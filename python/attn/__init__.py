"""attn: the Transformer of "Attention Is All You Need" for machine translation, from Python.

    import attn
    translator = attn.Translator("runs/en-es/model")            # precision="int8" to run in int8
    for result in translator.translate(["In the beginning God created the heaven and the earth."]):
        print(result.text, result.score)

Everything is the C++ library's (docs/python.md): the same translations, scores and errors as the
``attn`` command line. attn's errors are ValueError (a value given is wrong), FileNotFoundError (a
file or folder is not there) or RuntimeError, with the command line's message. The GIL is released
while attn computes: threads translating with separate Translators run in parallel.
"""

import json as _json
import os as _os
import threading as _threading
from typing import Callable, Iterable, List, Optional, Sequence, Union

from . import _attn
from ._attn import (Hypothesis, MetricScore, PairScore, TrainingEvent, TrainingSummary, TranslationResult,
                    request_training_stop)

__version__ = _attn.__version__
__all__ = ["Translator", "Vocabulary", "bleu", "chrf", "train", "request_training_stop", "detect_language",
           "DocumentTranslation", "Hypothesis", "TranslationResult", "PairScore", "MetricScore", "TrainingEvent",
           "TrainingSummary"]


class DocumentTranslation:
    """A document translated in its format: data (str for text, html and markdown; bytes for docx and
    odt), warnings (markup repaired, sentences cut or cropped) and the number of sentences translated."""

    def __init__(self, data, warnings: List[str], sentences: int):
        self.data = data
        self.warnings = warnings
        self.sentences = sentences

    def __repr__(self):
        return f"DocumentTranslation(sentences={self.sentences}, warnings={len(self.warnings)})"


_BINARY_FORMATS = ("docx", "odt")


def _texts(value, name: str) -> List[str]:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a list of strings, not a single {type(value).__name__}: "
                        f"write [{name[:-1] if name.endswith('s') else name}]")
    return list(value)


class Translator:
    """A model folder (model.safetensors, config.json, vocab.model) loaded to translate and score.

    precision: "" (as the file is: int8 files in int8, float32 files in fp32), "fp32", "bf16" (CPUs
    with AVX512-BF16) or "int8" (a float32 model quantized as it loads). threads: CPU threads of
    each call (0: all cores). One Translator may be used from several threads.
    """

    def __init__(self, model_dir: str, precision: str = "", threads: int = 0):
        if not isinstance(model_dir, str):
            model_dir = str(model_dir)  # pathlib.Path
        self._impl = _attn._Translator(model_dir, precision, threads)

    model_dir = property(lambda self: self._impl.model_dir, doc="the model folder")
    precision = property(lambda self: self._impl.precision, doc="what it runs in: fp32, bf16 or int8")
    threads = property(lambda self: self._impl.threads, doc="CPU threads of each call (0: all cores)")
    parameters = property(lambda self: self._impl.parameters, doc="the model's parameter count")
    vocabulary_size = property(lambda self: self._impl.vocabulary_size, doc="subword pieces in its vocabulary")
    max_input_tokens = property(lambda self: self._impl.max_input_tokens, doc="longer inputs are cropped")
    source_language = property(lambda self: self._impl.source_language,
                               doc="the source language code the model folder records ('' if none)")
    target_language = property(lambda self: self._impl.target_language,
                               doc="the target language code the model folder records ('' if none)")

    def translate(self, texts: Sequence[str], beam: int = 4, alpha: float = 0.6, n_best: int = 1,
                  max_length_a: float = 1.0, max_length_b: int = 50, min_length: int = 0,
                  batch_tokens: int = 2048, max_batch_sentences: int = 64, max_input_tokens: int = 0,
                  return_attention: bool = False, attention_kinds: Iterable[str] = ("cross",),
                  attention_layers: Optional[Iterable[int]] = None, attention_heads: Optional[Iterable[int]] = None,
                  return_alignment: bool = False, alignment_layer: int = -1, alignment_head: int = -1,
                  alignment_threshold: float = 0.0, shortlist: Optional[str] = None,
                  shortlist_k: int = 50) -> List[TranslationResult]:
        """Translates a list of texts; one TranslationResult per text, in order (as `attn translate`).

        beam: beam size (1: greedy); alpha: the length penalty's alpha; n_best: hypotheses returned
        (<= beam); at most max_length_a * source tokens + max_length_b output tokens, and no end before
        min_length. Texts are batched by length (batch_tokens source tokens, max_batch_sentences); inputs
        over max_input_tokens pieces are cropped (0: the model's maximum; result.cropped).
        return_attention: result.attention = {kind: float32 array [layers, heads, target, source]} for
        attention_kinds ("cross", "decoder_self", "encoder_self") over attention_layers and
        attention_heads (None: all). return_alignment: result.alignment = [(source word, target word)]
        from the cross-attention of alignment_layer (-1: the default) and alignment_head (-1: the mean),
        each target word to its most attended source word, or with alignment_threshold > 0 to every
        source word with at least that weight (docs/alignment.md). shortlist: a file of `attn shortlist
        build`; each batch is then decoded over the frequent pieces and each source piece's first
        shortlist_k candidates only (docs/shortlist.md).
        """
        return self._impl.translate(_texts(texts, "texts"), beam, alpha, n_best, max_length_a, max_length_b,
                                    min_length, batch_tokens, max_batch_sentences, max_input_tokens,
                                    return_attention, list(attention_kinds), list(attention_layers or []),
                                    list(attention_heads or []), return_alignment, alignment_layer,
                                    alignment_head, alignment_threshold, _os.fspath(shortlist) if shortlist else "",
                                    shortlist_k)

    def translate_document(self, data: Union[str, bytes], format: str = "text", source_language: str = "",
                           beam: int = 4, alpha: float = 0.6, max_length_a: float = 1.0, max_length_b: int = 50,
                           min_length: int = 0, batch_tokens: int = 2048, max_batch_sentences: int = 64,
                           shortlist: Optional[str] = None, shortlist_k: int = 50) -> DocumentTranslation:
        """Translates a whole document in its format (as `attn translate --format`): "text" (paragraphs),
        "html", "markdown", "docx" or "odt". Each paragraph is cut into sentences (source_language's
        rules; "": the model's source language), the sentences translated, inline markup and
        placeholders put back on the translated words, the layout kept. data: str or bytes (UTF-8 for
        the text formats; the file's bytes for docx and odt); the result's data has the same type
        for text formats, bytes for docx and odt."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        out, warnings, sentences = self._impl.translate_document(
            raw, format, source_language, beam, alpha, max_length_a, max_length_b, min_length, batch_tokens,
            max_batch_sentences, _os.fspath(shortlist) if shortlist else "", shortlist_k)
        if format.lower() not in _BINARY_FORMATS:
            out = out.decode("utf-8")
        return DocumentTranslation(out, list(warnings), sentences)

    def score(self, sources: Sequence[str], targets: Sequence[str], batch_sentences: int = 32) -> List[PairScore]:
        """The model's log-probability of given translations, one PairScore (log_prob, tokens,
        perplexity) per pair (as `attn score`)."""
        return self._impl.score(_texts(sources, "sources"), _texts(targets, "targets"), batch_sentences)

    def __repr__(self):
        return f"Translator({self.model_dir!r}, precision={self.precision!r})"


class Vocabulary:
    """A SentencePiece vocabulary as attn uses it (a model folder's vocab.model): text to ids or
    pieces and back. Ids 0-3 are <pad>, <unk>, <s> and </s>; encode never returns them."""

    def __init__(self, path: str):
        self._impl = _attn._Vocabulary(str(path))

    def encode(self, text: str) -> List[int]:
        """The text's ids, without </s>."""
        return self._impl.encode(text)

    def pieces(self, text: str) -> List[str]:
        """The text's subword pieces."""
        return self._impl.pieces(text)

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ids (<pad>, <s> and </s> skipped)."""
        return self._impl.decode(list(ids))

    def decode_pieces(self, pieces: Sequence[str]) -> str:
        """The text of pieces."""
        return self._impl.decode_pieces(_texts(pieces, "pieces"))

    def piece(self, id: int) -> str:
        """The piece of one id."""
        return self._impl.piece(id)

    def __len__(self) -> int:
        return self._impl.size()


def _reference_sets(references) -> List[List[str]]:
    references = _texts(references, "references")
    if references and isinstance(references[0], str):
        return [references]  # one reference per segment
    return [_texts(r, "references") for r in references]


def bleu(hypotheses: Sequence[str], references: Union[Sequence[str], Sequence[Sequence[str]]],
         lowercase: bool = False, tokenize: str = "13a") -> MetricScore:
    """Corpus BLEU, identical to sacreBLEU's (score, text and signature). references: one list of
    strings (one reference per segment) or several such lists (an empty string: no reference there)."""
    return _attn._bleu(_texts(hypotheses, "hypotheses"), _reference_sets(references), lowercase, tokenize)


def chrf(hypotheses: Sequence[str], references: Union[Sequence[str], Sequence[Sequence[str]]],
         word_order: int = 0, lowercase: bool = False) -> MetricScore:
    """Corpus chrF (word_order 2: chrF++), identical to sacreBLEU's."""
    return _attn._chrf(_texts(hypotheses, "hypotheses"), _reference_sets(references), word_order, lowercase)


def train(options: dict, progress: Optional[Callable[[TrainingEvent], Optional[bool]]] = None,
          resume: bool = False, quiet: bool = False) -> TrainingSummary:
    """Trains a model in this process, as `attn train` with `options` as its --config file (the keys
    of `attn train --dump-config`, docs/config.md).

    progress(event) is called with each record of the run's train.jsonl (event.json holds it all);
    return False to stop after the current update with a checkpoint (stop_reason "interrupted";
    continue with resume=True). Ctrl-C does the same and then raises KeyboardInterrupt. quiet: no
    progress lines on stderr. Returns a TrainingSummary (steps, epochs, stop_reason, model_dir).
    """
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict of attn train's options, not {type(options).__name__}")
    catch_sigint = _threading.current_thread() is _threading.main_thread()
    return _attn._train(_json.dumps(options), progress, resume, quiet, catch_sigint)


def detect_language(text: str, languages: Sequence[str]) -> List[tuple]:
    """The languages among `languages` (ISO 639-1 codes) that text may be in, most likely first, as
    (code, confidence 0-100) pairs (CLD2, as the service's /detect). Empty when none is found."""
    return [(code, confidence) for code, confidence in _attn._detect_language(text, _texts(languages, "languages"))]
