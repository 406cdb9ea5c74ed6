#pragma once
// SearchOptions is part of the public API (include/attn/search_options.h).
#include "attn/search_options.h"
