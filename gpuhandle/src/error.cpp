// Error construction, formatting and the code -> kind table.
#include <gpuhandle/error.h>

#include <cstdarg>
#include <cstdio>

namespace gpuhandle {

Error::Error(ErrorCode code, std::string field, std::string message)
	: code_(code), field_(std::move(field)), message_(std::move(message))
{
}

Error Error::format(ErrorCode code, std::string field, const char *fmt, ...)
{
	char buffer[512];
	va_list args;
	va_start(args, fmt);
	std::vsnprintf(buffer, sizeof(buffer), fmt, args);
	va_end(args);
	return Error(code, std::move(field), buffer);
}

ErrorKind errorKindOf(ErrorCode code) noexcept
{
	switch (code) {
	case ErrorCode::Cancelled: return ErrorKind::Cancelled;
	case ErrorCode::OutOfMemory:
	case ErrorCode::Timeout:
	case ErrorCode::WouldBlock:
	case ErrorCode::Io: return ErrorKind::Recoverable;
	case ErrorCode::InvalidArgument:
	case ErrorCode::NullHandle:
	case ErrorCode::ZeroSize:
	case ErrorCode::OutOfRange:
	case ErrorCode::BadFd:
	case ErrorCode::WrongKind:
	case ErrorCode::NotSupported:
	case ErrorCode::InvalidState:
	case ErrorCode::DeviceMismatch:
	case ErrorCode::FormatMismatch: return ErrorKind::Configuration;
	case ErrorCode::DeviceLost:
	case ErrorCode::Backend:
	case ErrorCode::Fatal: return ErrorKind::Fatal;
	}
	return ErrorKind::Fatal;
}

const char *errorCodeName(ErrorCode code) noexcept
{
	switch (code) {
	case ErrorCode::InvalidArgument: return "invalid-argument";
	case ErrorCode::NullHandle: return "null-handle";
	case ErrorCode::ZeroSize: return "zero-size";
	case ErrorCode::OutOfRange: return "out-of-range";
	case ErrorCode::BadFd: return "bad-fd";
	case ErrorCode::WrongKind: return "wrong-kind";
	case ErrorCode::NotSupported: return "not-supported";
	case ErrorCode::InvalidState: return "invalid-state";
	case ErrorCode::OutOfMemory: return "out-of-memory";
	case ErrorCode::Timeout: return "timeout";
	case ErrorCode::WouldBlock: return "would-block";
	case ErrorCode::Cancelled: return "cancelled";
	case ErrorCode::DeviceLost: return "device-lost";
	case ErrorCode::DeviceMismatch: return "device-mismatch";
	case ErrorCode::FormatMismatch: return "format-mismatch";
	case ErrorCode::Io: return "io";
	case ErrorCode::Backend: return "backend";
	case ErrorCode::Fatal: return "fatal";
	}
	return "unknown";
}

const char *errorKindName(ErrorKind kind) noexcept
{
	switch (kind) {
	case ErrorKind::Cancelled: return "cancelled";
	case ErrorKind::Recoverable: return "recoverable";
	case ErrorKind::Configuration: return "configuration";
	case ErrorKind::Fatal: return "fatal";
	}
	return "unknown";
}

} // namespace gpuhandle
