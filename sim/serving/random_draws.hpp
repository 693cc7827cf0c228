#pragma once
// Random draws written in the project: the standard library's distributions differ between
// implementations, and a seed must give the same workload everywhere (STYLE.md).
#include <random>

namespace hetsim::serving {

// Uniform on the open interval (0, 1): the top 53 bits of one 64-bit draw, offset by half a step.
double uniform_open01(std::mt19937_64& rng);

// Exponential of the given mean (inversion: -mean * ln U).
double exponential(std::mt19937_64& rng, double mean);

// Standard normal by Box-Muller (the cosine branch; one normal per two uniforms).
double standard_normal(std::mt19937_64& rng);

// Gamma of shape k > 0 and scale 1: Marsaglia and Tsang, "A Simple Method for Generating Gamma
// Variables", ACM TOMS 26(3), 2000; for k < 1 their boost Gamma(k) = Gamma(k + 1) * U^(1/k).
double gamma_unit_scale(std::mt19937_64& rng, double shape);

// Uniform on the integers min..max.
int uniform_int(std::mt19937_64& rng, int min, int max);

}  // namespace hetsim::serving
