// <immintrin.h> without GCC 12's false -Wuninitialized / -Wmaybe-uninitialized: its
// avx512fintrin.h builds the unmasked max / min and some conversions from
// _mm512_undefined_*(), which both warnings report once inlined, located inside the
// header. Include this first in an ISA file, before any header that pulls in
// <immintrin.h>, so that the header's one inclusion falls inside the silenced region; the
// file's own code keeps both warnings.
#pragma once
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
