#pragma once
// attn, the Transformer of "Attention Is All You Need" as a library: #include <attn/attn.h>, link
// attn::attn (CMake: find_package(attn CONFIG)) or `pkg-config --cflags --libs attn`.
// docs/cpp-api.md.
#include "attn/document.h"
#include "attn/error.h"
#include "attn/metrics.h"
#include "attn/search_options.h"
#include "attn/training.h"
#include "attn/translator.h"
#include "attn/version.h"
#include "attn/vocabulary.h"
