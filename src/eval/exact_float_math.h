#pragma once
// Include after all other headers in a .cpp whose arithmetic must round exactly as Python's does.
// -march=native lets the compiler fuse a * b + c into one FMA, which rounds once instead of twice
// and can move a score by an ulp; this turns that off for the functions defined after it.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
