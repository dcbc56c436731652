// Error values returned by every fallible gpuhandle call: a code, the field at fault and a
// sentence.
#pragma once

#include <gpuhandle/export.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace GPUHANDLE_API gpuhandle {

// Stable numbers: the C API's gpuhandle_status uses the same values.
enum class ErrorCode : int32_t {
	InvalidArgument = 1, // a value is out of its allowed set
	NullHandle = 2,      // a required handle or pointer is null / zero
	ZeroSize = 3,        // a required size, extent or count is zero
	OutOfRange = 4,      // an index, offset or count lies outside its container
	BadFd = 5,           // a file descriptor is negative or not open
	WrongKind = 6,       // an accessor was used on a value of another kind or backend
	NotSupported = 7,    // the operation or format is not available here
	InvalidState = 8,    // a call in the wrong lifecycle position
	OutOfMemory = 9,     // a budget or allocation could not be satisfied
	Timeout = 10,        // a bounded wait ran out
	WouldBlock = 11,     // a non-blocking call could not finish now
	Cancelled = 12,      // the operation was cancelled; not a failure
	DeviceLost = 13,     // the device went away; the pipeline must restart
	DeviceMismatch = 14, // two values name different physical devices
	FormatMismatch = 15, // formats or layouts of two sides disagree
	Io = 16,             // a system call failed (errno in the message)
	Backend = 17,        // a backend library reported an error
	Fatal = 18,          // an internal invariant broke
};

// What a caller should do about an error.
enum class ErrorKind : int32_t {
	Cancelled = 0,     // not a failure: no retry, no error state, no error-level log
	Recoverable = 1,   // transient: retry or skip this frame
	Configuration = 2, // the same input fails the same way: reconfigure
	Fatal = 3,         // abort the pipeline
};

// The ErrorKind of a code (Timeout and Io: Recoverable, DeviceLost: Fatal, ...); Fatal for a
// value outside ErrorCode.
GPUHANDLE_API ErrorKind errorKindOf(ErrorCode code) noexcept;
// A code's stable lowercase name for logs ("invalid-argument", "bad-fd"); "unknown" for a value
// outside ErrorCode. Static storage: never freed.
GPUHANDLE_API const char *errorCodeName(ErrorCode code) noexcept;
// A kind's stable lowercase name ("recoverable"); "unknown" for a value outside ErrorKind.
// Static storage: never freed.
GPUHANDLE_API const char *errorKindName(ErrorKind kind) noexcept;

// What went wrong (code), where (field) and a sentence for a person (message). A plain value:
// copyable and movable; the strings are its own.
class Error
{
public:
	// `field` names the offending field ("planes[1].pitch"), or is "" when none applies;
	// `message` is a whole sentence with the values in it.
	Error(ErrorCode code, std::string field, std::string message);

	// printf-style constructor: the message is a whole sentence with the values in it.
	[[gnu::format(printf, 3, 4)]] static Error format(ErrorCode code, std::string field,
							  const char *fmt, ...);

	ErrorCode code() const noexcept { return code_; }              // what went wrong
	ErrorKind kind() const noexcept { return errorKindOf(code_); } // what to do about it
	// The name of the offending field ("planes[1].pitch"), or "" when none applies.
	const char *field() const noexcept { return field_.c_str(); }
	const std::string &message() const noexcept { return message_; } // the whole sentence

private:
	ErrorCode code_;
	std::string field_;
	std::string message_;
};

} // namespace gpuhandle
