# Type stubs of attn's compiled core (python/src/module.cpp); the package attn wraps it.
from typing import Callable, Dict, List, Optional, Tuple

import numpy

__version__: str

class Hypothesis:
    text: str
    tokens: List[str]
    score: float
    log_prob: float

class TranslationResult(Hypothesis):
    n_best: List[Hypothesis]
    source_tokens: List[str]
    cropped: bool
    attention: Dict[str, numpy.ndarray]  # float32 [layers, heads, target, source]
    alignment: List[Tuple[int, int]]

class PairScore:
    log_prob: float
    tokens: int
    perplexity: float

class MetricScore:
    score: float
    text: str
    signature: str
    def __float__(self) -> float: ...

class TrainingEvent:
    type: str
    step: int
    epoch: int
    loss: float
    perplexity: float
    learning_rate: float
    tokens_per_second: float
    elapsed_seconds: float
    json: str

class TrainingSummary:
    steps: int
    epochs: int
    stop_reason: str
    model_dir: str
    best_valid_loss: float

class _Translator:
    def __init__(self, model_dir: str, precision: str, threads: int) -> None: ...
    def translate(self, texts: List[str], beam: int, alpha: float, n_best: int, max_length_a: float,
                  max_length_b: int, min_length: int, batch_tokens: int, max_batch_sentences: int,
                  max_input_tokens: int, return_attention: bool, attention_kinds: List[str],
                  attention_layers: List[int], attention_heads: List[int], return_alignment: bool,
                  alignment_layer: int, alignment_head: int, alignment_threshold: float, shortlist: str,
                  shortlist_k: int) -> List[TranslationResult]: ...
    def translate_document(self, data: bytes, format: str, source_language: str, beam: int, alpha: float,
                           max_length_a: float, max_length_b: int, min_length: int, batch_tokens: int,
                           max_batch_sentences: int, shortlist: str, shortlist_k: int) -> Tuple[bytes, List[str], int]: ...
    def score(self, sources: List[str], targets: List[str], batch_sentences: int) -> List[PairScore]: ...
    model_dir: str
    precision: str
    threads: int
    parameters: int
    vocabulary_size: int
    max_input_tokens: int
    source_language: str
    target_language: str

class _Vocabulary:
    def __init__(self, path: str) -> None: ...
    def encode(self, text: str) -> List[int]: ...
    def pieces(self, text: str) -> List[str]: ...
    def decode(self, ids: List[int]) -> str: ...
    def decode_pieces(self, pieces: List[str]) -> str: ...
    def piece(self, id: int) -> str: ...
    def size(self) -> int: ...

def _bleu(hypotheses: List[str], references: List[List[str]], lowercase: bool, tokenize: str) -> MetricScore: ...
def _chrf(hypotheses: List[str], references: List[List[str]], word_order: int, lowercase: bool) -> MetricScore: ...
def _train(options_json: str, progress: Optional[Callable[[TrainingEvent], Optional[bool]]], resume: bool,
           quiet: bool, catch_sigint: bool) -> TrainingSummary: ...
def request_training_stop() -> None: ...
def _detect_language(text: str, languages: List[str]) -> List[Tuple[str, float]]: ...
