// Validated<Desc>: the sealed base of every resource type; built only by its checking factory.
#pragma once

#include <gpuhandle/export.h>

#include <utility>

namespace GPUHANDLE_API gpuhandle {

// A resource type derives from Validated<XDesc> and offers one `static Result<X> create(XDesc)`.
// Once built, its description can be read (desc()) but never edited, so a validated value
// stays valid. Copying copies the description: plain values plus shared anchors and fds.
template<typename D>
class Validated
{
public:
	using Desc = D; // the description type, XDesc
	// The checked description, as create() accepted it; valid as long as this value lives.
	const Desc &desc() const noexcept { return d_; }

protected:
	// For the derived type's create(), once every check has passed: stores d as it is.
	explicit Validated(Desc d) : d_(std::move(d)) {}
	Desc d_; // derived types only read it, so what create() checked keeps holding
};

} // namespace gpuhandle
