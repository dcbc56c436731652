// Bounded little-endian writer and reader for the wire format (no allocation, no overrun).
#pragma once

#include <gpuhandle/wire_format.h>

#include <cstring>
#include <type_traits>

namespace gpuhandle::detail {

// Appends fixed-width fields to a WireMessage; once a field does not fit, `ok` stays false
// and nothing more is written (the encoder reports the message as too large).
class WireWriter
{
public:
	explicit WireWriter(WireMessage &out) : out_(out) { out_.size = kWireHeaderBytes; }

	template<typename T>
	void put(T value)
	{
		static_assert(std::is_integral_v<T> && std::endian::native == std::endian::little,
			      "the wire format is little-endian; big-endian hosts would swap here");
		if (!ok_ || out_.size + sizeof(T) > kWireMaxMessage) {
			ok_ = false;
			return;
		}
		std::memcpy(out_.bytes.data() + out_.size, &value, sizeof(T));
		out_.size += static_cast<uint32_t>(sizeof(T));
	}
	void putBytes(const void *data, size_t size)
	{
		if (!ok_ || out_.size + size > kWireMaxMessage) {
			ok_ = false;
			return;
		}
		std::memcpy(out_.bytes.data() + out_.size, data, size);
		out_.size += static_cast<uint32_t>(size);
	}
	// The index the fd will have at the receiver, or false when there are too many.
	bool addFd(int fd, uint32_t &index)
	{
		if (out_.numFds >= kWireMaxFds)
			return ok_ = false;
		index = out_.numFds;
		out_.fds[out_.numFds++] = fd;
		return true;
	}
	bool ok() const noexcept { return ok_; }
	// Writes the header over the first 16 bytes, now that the size and fd count are known.
	void finish(WireType type);

private:
	WireMessage &out_;
	bool ok_ = true;
};

// Reads fixed-width fields; a read past the end sets `ok` false and yields zeros, so a
// decoder reads a whole record and checks once.
class WireReader
{
public:
	explicit WireReader(std::span<const std::byte> bytes)
		: bytes_(bytes), pos_(kWireHeaderBytes)
	{
	}

	template<typename T>
	T get()
	{
		static_assert(std::is_integral_v<T>);
		T value{};
		if (pos_ + sizeof(T) > bytes_.size()) {
			ok_ = false;
			return value;
		}
		std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
		pos_ += sizeof(T);
		return value;
	}
	std::span<const std::byte> getBytes(size_t size)
	{
		if (size > bytes_.size() - pos_ || pos_ > bytes_.size()) {
			ok_ = false;
			return {};
		}
		auto out = bytes_.subspan(pos_, size);
		pos_ += size;
		return out;
	}
	bool ok() const noexcept { return ok_; }
	// Every byte read, none left over.
	bool atEnd() const noexcept { return ok_ && pos_ == bytes_.size(); }

private:
	std::span<const std::byte> bytes_;
	size_t pos_;
	bool ok_ = true;
};

} // namespace gpuhandle::detail
