/*
 * kernels.cu: the one translation unit nvcc compiles into live mode's
 * fatbin (nvcc -fatbin takes a single input); each kernel stays in the
 * file of its job.
 */
#include "pattern.cu"
#include "fill.cu"
#include "bandwidth.cu"
