// GANTRY_VECTOR_CLONES: marks a hot element-wise loop to be compiled once per x86-64
// ISA level (v4: AVX-512, v3: AVX2 + FMA, and the baseline), the copy picked when the
// program loads by what the CPU offers (GCC's target_clones, resolved through an ifunc).
//
// Why: a portable build (GANTRY_NATIVE=OFF: images, release builds) is compiled for the
// x86-64 baseline, SSE2, so our own loops (BatchNorm, activations, dropout, Adam, the bf16
// copies) would run at a quarter of the vector width -native gives them; oneDNN already
// dispatches at run time, these loops did not, and a portable DCGAN step ran ~25 % slower.
// `flatten` inlines the helpers and lambdas a marked function calls, so they are
// compiled for the clone's ISA too. GCC cannot multiversion a virtual function, so a
// backend method forwards to a free `...Kernel` function that carries the mark.
//
// Contract: every copy gives bit-identical results. Portable builds compile with
// -ffp-contract=off (no clone fuses a multiply-add the baseline rounds twice), and
// without -ffast-math the compiler may not reorder a float sum, so a wider vector only
// runs the same operations side by side. Native builds (-march=native) and non-x86
// targets compile the function once, as written: the macro is then empty.
#pragma once

#if defined(GANTRY_PORTABLE_X86_CLONES) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GANTRY_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define GANTRY_VECTOR_CLONES
#endif
