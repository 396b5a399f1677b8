// The kinetic energy spectrum of a flow field along the stream (x), and how far a
// predicted field's spectrum is from the truth's: a rollout that keeps its error small
// in L2 can still pile energy into scales the flow does not have (a tile-sized texture,
// grid-scale noise) or lose the small eddies (a blurred wake); the spectrum shows both.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

// E(k) for k = 1 .. nx / 2 (index k - 1): the energy of the velocity fluctuation at
// wavenumber k along each row, summed over the rows, of ux and uy (the first two planes
// of `field`, [planes, ny, nx], physical units):
//   E(k) = 1/2 sum_y (|FFT(ux[y, :])(k)|^2 + |FFT(uy[y, :])(k)|^2) / nx^2
// (the mean, k = 0, is the stream itself and left out; FFT without a window, as the
// field is not periodic in x both fields leak alike). Empty when nx < 2.
std::vector<double> StreamwiseEnergySpectrum(const float* field, int64_t ny, int64_t nx);

// sum_k |E_pred(k) - E_true(k)| / sum_k E_true(k): 0 for the same spectrum, 1 for a
// spectrum twice the truth's (or none at all), 2 for all the energy at other scales;
// +inf when the truth has no fluctuation but the prediction has. Spectra of one length.
double SpectrumError(const std::vector<double>& predicted, const std::vector<double>& truth);

}  // namespace gantry
