// The process's memory budget for gpuhandle's GStreamer elements, and its property's syntax.
#include <cctype>
#include <cmath>
#include <string>
#include <unistd.h>

#include <gst/gpuhandle/gstgpuhandlebudget.hpp>

namespace gpuhandle::gst {

std::shared_ptr<MemoryBudget> processBudget()
{
	// Made once and never freed: elements of any pipeline, on any thread, until the process
	// ends (a static destructor would free it under pools still registered with it).
	static const std::shared_ptr<MemoryBudget> *budget = [] {
		Result<std::shared_ptr<MemoryBudget>> made = MemoryBudget::create();
		return new std::shared_ptr<MemoryBudget>(made.ok() ? *made : nullptr);
	}();
	return *budget;
}

uint64_t budgetBaseBytes(const Backend &backend)
{
	if (uint64_t dedicated = backend.deviceInfo().dedicatedMemoryBytes; dedicated > 0)
		return dedicated;
	const long pages = sysconf(_SC_PHYS_PAGES);
	const long pageSize = sysconf(_SC_PAGESIZE);
	return pages > 0 && pageSize > 0
		       ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
		       : 0;
}

namespace {

Error badCap(std::string_view text, const char *why)
{
	return Error::format(ErrorCode::InvalidArgument, "memory-budget",
			     "\"%.*s\" is not a memory budget: %s (bytes, e.g. \"512M\" or "
			     "\"1.5GiB\", or a share of the device's memory, e.g. \"25%%\").",
			     static_cast<int>(text.size()), text.data(), why);
}

} // namespace

Result<std::optional<uint64_t>> parseBudgetCap(std::string_view text, uint64_t baseBytes)
{
	while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
		text.remove_prefix(1);
	while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
		text.remove_suffix(1);
	if (text.empty() || text == "none")
		return std::optional<uint64_t>{};
	const std::string copy(text);
	char *end = nullptr;
	const double number = std::strtod(copy.c_str(), &end);
	if (end == copy.c_str() || !std::isfinite(number) || number <= 0 || copy[0] == '-')
		return badCap(text, "it does not start with a positive number");
	std::string unit(end);
	unit.erase(0, unit.find_first_not_of(" \t")); // "2 GB"
	for (char &c : unit)
		c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	double bytes = 0;
	if (unit == "%") {
		if (number > 100)
			return badCap(text, "a share above 100% of the device's memory");
		if (baseBytes == 0)
			return badCap(text, "the device's memory size is not known here");
		bytes = std::floor(static_cast<double>(baseBytes) * number / 100.0);
	} else {
		double scale = 0;
		for (const auto &[prefix, factor] :
		     { std::pair{ "", 1.0 }, std::pair{ "K", 0x1p10 }, std::pair{ "M", 0x1p20 },
		       std::pair{ "G", 0x1p30 }, std::pair{ "T", 0x1p40 } })
			for (const char *suffix : { "", "B", "IB" })
				if (unit == std::string(prefix) + suffix &&
				    !(prefix[0] == '\0' && suffix[0] == 'I'))
					scale = factor;
		if (scale == 0)
			return badCap(text, "an unknown unit");
		bytes = std::floor(number * scale);
	}
	if (bytes < 1)
		return badCap(text, "less than one byte");
	if (bytes >= 0x1p64)
		return badCap(text, "more bytes than 64 bits hold");
	return std::optional<uint64_t>(static_cast<uint64_t>(bytes));
}

void addBudgetStats(GstStructure *stats, const MemoryBudget &budget, BackendKind kind)
{
	if (!stats)
		return;
	gst_structure_set(stats, "budget-bytes", G_TYPE_UINT64,
			  static_cast<guint64>(budget.usage(kind)), "budget-peak-bytes",
			  G_TYPE_UINT64, static_cast<guint64>(budget.peakUsage(kind)),
			  "budget-cap-bytes", G_TYPE_UINT64,
			  static_cast<guint64>(budget.caps(kind).hardBytes.value_or(0)), nullptr);
}

} // namespace gpuhandle::gst
