// Colorimetry::isValid: refuses the numbers H.273 reserves.
#include <gpuhandle/colorimetry.h>

namespace gpuhandle {

bool Colorimetry::isValid() const noexcept
{
	auto r = static_cast<unsigned>(range);
	auto m = static_cast<unsigned>(matrix);
	auto p = static_cast<unsigned>(primaries);
	auto t = static_cast<unsigned>(transfer);
	bool rangeOk = r <= 2;
	bool matrixOk = m <= 14 && m != 3;
	bool primariesOk = (p >= 1 && p <= 12 && p != 3) || p == 22;
	bool transferOk = t >= 1 && t <= 18 && t != 3;
	return rangeOk && matrixOk && primariesOk && transferOk;
}

} // namespace gpuhandle
