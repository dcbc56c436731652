// The benchmark harness: options, statistics, the results table and its JSON summary.
#include "bench_common.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sys/utsname.h>
#include <thread>

namespace gpuhandle::bench {

Options parseOptions(int argc, char **argv)
{
	Options o;
	for (int i = 1; i < argc; i++) {
		if (std::strcmp(argv[i], "--short") == 0)
			o.shortMode = true;
		else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
			o.jsonPath = argv[++i];
	}
	return o;
}

Stats statsOf(std::vector<double> samples)
{
	Stats s;
	if (samples.empty())
		return s;
	std::sort(samples.begin(), samples.end());
	const size_t n = samples.size();
	s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	s.p99 = samples[std::min(n - 1, static_cast<size_t>(std::ceil(0.99 * double(n))) - 1)];
	s.min = samples.front();
	s.max = samples.back();
	double sum = 0;
	for (double v : samples)
		sum += v;
	s.mean = sum / double(n);
	return s;
}

namespace {

std::string jsonString(const std::string &text)
{
	std::string out = "\"";
	for (char c : text) {
		if (c == '"' || c == '\\')
			out += '\\';
		if (static_cast<unsigned char>(c) < 0x20)
			continue;
		out += c;
	}
	return out + "\"";
}

std::string machine()
{
	utsname u{};
	uname(&u);
	return std::string(u.sysname) + " " + u.release + " " + u.machine + ", " +
	       std::to_string(std::thread::hardware_concurrency()) + " CPUs";
}

} // namespace

Report::Report(std::string benchmark, Options options)
	: benchmark_(std::move(benchmark)), options_(std::move(options))
{
	std::printf("%s%s\n", benchmark_.c_str(),
		    options_.shortMode ? " (short mode: few iterations, figures not meaningful)"
				       : "");
	std::printf("  %-44s %14s %14s %8s %8s\n", "case", "baseline", "gpuhandle", "ratio",
		    "target");
}

void Report::add(Result r)
{
	char target[32] = "-";
	if (r.targetRatio > 0)
		std::snprintf(target, sizeof target, "<=%.2f%s", r.targetRatio, r.met() ? "" : "!");
	else if (r.maxValue >= 0)
		std::snprintf(target, sizeof target, "<=%g%s%s", r.maxValue, r.unit.c_str(),
			      r.met() ? "" : "!");
	// Allocations per frame with three decimals: a target of none needs them told from 0.0.
	const bool counts = r.unit == "al";
	std::printf("  %-44s %11.*f %-2s %11.*f %-2s %8.3f %8s\n", r.name.c_str(), counts ? 3 : 1,
		    r.baselineValue, r.unit.c_str(), counts ? 3 : 1, r.value, r.unit.c_str(),
		    r.ratio(), target);
	std::printf("    baseline: %s%s%s\n", r.baseline.c_str(), r.note.empty() ? "" : "; ",
		    r.note.c_str());
	results_.push_back(std::move(r));
}

int Report::finish()
{
	if (options_.jsonPath.empty())
		return 0;
	std::ofstream out(options_.jsonPath);
	out << "{\n  \"benchmark\": " << jsonString(benchmark_)
	    << ",\n  \"short\": " << (options_.shortMode ? "true" : "false")
	    << ",\n  \"machine\": " << jsonString(machine()) << ",\n  \"results\": [";
	for (size_t i = 0; i < results_.size(); i++) {
		const Result &r = results_[i];
		out << (i ? "," : "") << "\n    {\"name\": " << jsonString(r.name)
		    << ", \"baseline\": " << jsonString(r.baseline)
		    << ", \"baseline_value\": " << r.baselineValue << ", \"value\": " << r.value
		    << ", \"unit\": " << jsonString(r.unit) << ", \"ratio\": " << r.ratio()
		    << ", \"target_ratio\": " << r.targetRatio << ", \"max_value\": " << r.maxValue
		    << ", \"met\": " << (r.met() ? "true" : "false")
		    << ", \"note\": " << jsonString(r.note) << "}";
	}
	out << "\n  ]\n}\n";
	std::printf("  summary written to %s\n", options_.jsonPath.c_str());
	return out ? 0 : 1;
}

} // namespace gpuhandle::bench
