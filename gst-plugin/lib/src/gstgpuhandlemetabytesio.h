// Internal to libgstgpuhandle: the bounded little-endian writer and reader of the meta bytes, and
// structures in them (gstgpuhandlemetabytes.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include <gst/gst.h>

namespace gpuhandle::gst::metabytes {

// Appends little-endian fields; once one does not fit, `ok` stays false.
class Writer
{
public:
	Writer(std::span<std::byte> out, size_t pos) : out_(out), pos_(pos) {}
	template<typename T>
	void put(T value)
	{
		static_assert(std::is_integral_v<T>);
		putBytes(&value, sizeof value);
	}
	void putBytes(const void *data, size_t size)
	{
		if (!ok_ || size > out_.size() - pos_) {
			ok_ = false;
			return;
		}
		if (size)
			std::memcpy(out_.data() + pos_, data, size);
		pos_ += size;
	}
	// u16 length, then the bytes (no terminator).
	void putString(std::string_view text)
	{
		if (text.size() > UINT16_MAX) {
			ok_ = false;
			return;
		}
		put<uint16_t>(static_cast<uint16_t>(text.size()));
		putBytes(text.data(), text.size());
	}
	// Overwrites a field written before at `at` (a count known only afterwards).
	void patchU16(size_t at, uint16_t value)
	{
		if (ok_)
			std::memcpy(out_.data() + at, &value, sizeof value);
	}
	bool ok() const noexcept { return ok_; }
	size_t pos() const noexcept { return pos_; }

private:
	std::span<std::byte> out_;
	size_t pos_;
	bool ok_ = true;
};

// Reads little-endian fields; a read past the end sets `ok` false and yields zeros.
class Reader
{
public:
	explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
	template<typename T>
	T get()
	{
		T value{};
		if (auto raw = getBytes(sizeof value); raw.size() == sizeof value)
			std::memcpy(&value, raw.data(), sizeof value);
		return value;
	}
	std::span<const std::byte> getBytes(size_t size)
	{
		if (!ok_ || size > bytes_.size() - pos_) {
			ok_ = false;
			return {};
		}
		auto out = bytes_.subspan(pos_, size);
		pos_ += size;
		return out;
	}
	std::span<const std::byte> rest() { return getBytes(bytes_.size() - pos_); }
	// A u16-length string without NULs (GLib's parsers stop at one).
	std::string getString()
	{
		auto raw = getBytes(get<uint16_t>());
		std::string text(reinterpret_cast<const char *>(raw.data()), raw.size());
		if (text.find('\0') != std::string::npos)
			ok_ = false;
		return text;
	}
	bool ok() const noexcept { return ok_; }
	bool atEnd() const noexcept { return ok_ && pos_ == bytes_.size(); }

private:
	std::span<const std::byte> bytes_;
	size_t pos_ = 0;
	bool ok_ = true;
};

// A structure's name and its fields of plain types (strings, 32- and 64-bit integers, doubles,
// booleans; others are left out): never as text, since GStreamer's parser of structure text posts
// criticals on some malformed names and another process's text must not reach it.
void writeStructure(Writer &w, const GstStructure *s);
// A structure as writeStructure wrote it (transfer full); null when anything is malformed (a name
// GStreamer would refuse, a string that is not UTF-8, an unknown field type, a field twice).
GstStructure *readStructure(Reader &r);

} // namespace gpuhandle::gst::metabytes
