// gpuhandle-info: every backend's device, which devices are the same GPU, and the import matrix.
#include <gpuhandle/backends/planner.h>

#include "gpuhandle_i18n.h"
#include "gpuhandle_info_bridges.h"
#include "gpuhandle_info_json.h"
#include "gpuhandle_program.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace gpuhandle;
using gpuhandle::info::jsonString;

namespace {

// Formats the matrix tries: the common set, each where both sides can hold it.
constexpr PixelFormat kMatrixFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P,
					   PixelFormat::P010LE, PixelFormat::RGBA,
					   PixelFormat::V210 };

struct Cell {
	PixelFormat format = PixelFormat::Unknown;
	bool ok = false;
	ImportRoute route = ImportRoute::Direct;
	ExecutionPath path{};
	std::string why{};
};

struct Pair {
	size_t from = 0;
	size_t into = 0;
	size_t commonFormats = 0; // known formats both hold in a buffer
	std::vector<Cell> cells{};
};

template<typename T, typename F>
std::string joined(const std::vector<T> &values, F name, const char *sep = ", ")
{
	std::string out;
	for (const T &value : values)
		out += (out.empty() ? "" : sep) + std::string(name(value));
	return out.empty() ? std::string(_("none")) : out;
}

template<typename T, typename F>
std::string jsonArray(const std::vector<T> &values, F name)
{
	std::string out = "[";
	for (const T &value : values)
		out += (out.size() > 1 ? ", " : "") + jsonString(name(value));
	return out + "]";
}

std::string modifierName(uint64_t modifier)
{
	char text[24];
	std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(modifier));
	return text;
}

// Runs the planner on a small frame of each format: the matrix shows what really happens here.
Pair measure(const std::vector<BackendRef> &backends, size_t from, size_t into)
{
	Pair pair{ from, into, 0, {} };
	Backend &source = *backends[from];
	Backend &target = *backends[into];
	for (const PixelFormatInfo &info : allPixelFormats())
		if (source.supportsFormat(info.format, FrameStorage::Buffer) &&
		    target.supportsFormat(info.format, FrameStorage::Buffer))
			++pair.commonFormats;
	for (PixelFormat format : kMatrixFormats) {
		Cell cell;
		cell.format = format;
		if (!source.supportsFormat(format, FrameStorage::Buffer) ||
		    !target.supportsFormat(format, FrameStorage::Buffer)) {
			cell.why = "not held by both";
			pair.cells.push_back(std::move(cell));
			continue;
		}
		AllocateRequest request;
		request.format = format;
		request.width = 64;
		request.height = 64;
		Result<Frame> frame = source.allocate(request);
		if (!frame.ok()) {
			cell.why = frame.error().message();
			pair.cells.push_back(std::move(cell));
			continue;
		}
		ImportOptions options;
		options.source = backends[from];
		Result<ImportResult> result = importFrame(*frame, target, options);
		if (result.ok()) {
			cell.ok = true;
			cell.route = result->route;
			cell.path = result->path;
		} else {
			cell.why = result.error().message();
		}
		pair.cells.push_back(std::move(cell));
	}
	return pair;
}

void printBackendText(const BackendProbe &probe)
{
	if (!probe.backend) {
		std::printf(_("%s: not available: %s\n"), backendKindName(probe.kind),
			    probe.why ? probe.why->message().c_str() : "");
		return;
	}
	const Backend &b = *probe.backend;
	const BackendCapabilities &c = b.capabilities();
	std::printf("%s\n", b.deviceInfo().toString().c_str());
	auto kinds = [](ResourceKind k) { return resourceKindName(k); };
	auto syncs = [](SyncKind k) { return syncKindName(k); };
	// TRANSLATORS: the labels of one backend's capabilities, aligned with spaces.
	std::printf(_("        allocates: %s\n"), joined(c.allocates, kinds).c_str());
	std::printf(_("        exports:   %s\n"), joined(c.exports, kinds).c_str());
	std::printf(_("        imports:   %s\n"), joined(c.imports, kinds).c_str());
	std::printf(_("        routes:    %s\n"), joined(c.routes, importRouteName).c_str());
	std::printf("%s", _("        formats:  "));
	for (FrameStorage storage :
	     { FrameStorage::Buffer, FrameStorage::LinearImage, FrameStorage::OptimalImage })
		std::printf(" %s %zu", frameStorageName(storage),
			    b.supportedFormats(storage).size());
	std::printf(_("\n        modifiers: %s\n"), joined(c.drmModifiers, modifierName).c_str());
	std::printf(_("        fences:    export %s; import %s\n"),
		    joined(c.fenceExports, syncs).c_str(), joined(c.fenceImports, syncs).c_str());
	std::printf(_("        cpu map %s, device copy %s\n"), c.cpuMap ? _("yes") : _("no"),
		    c.gpuCopy ? _("yes") : _("no"));
}

std::string backendJson(const BackendProbe &probe)
{
	std::string out = "{\"backend\": " + jsonString(backendKindName(probe.kind));
	if (!probe.backend)
		return out + ", \"available\": false, \"reason\": " +
		       jsonString(probe.why ? probe.why->message() : "") + "}";
	const Backend &b = *probe.backend;
	const DeviceInfo &info = b.deviceInfo();
	const BackendCapabilities &c = b.capabilities();
	auto kinds = [](ResourceKind k) { return resourceKindName(k); };
	auto syncs = [](SyncKind k) { return syncKindName(k); };
	auto formatName = [](PixelFormat f) { return pixelFormatName(f); };
	out += ", \"available\": true, \"name\": " + jsonString(info.name) +
	       ", \"id\": " + jsonString(info.id.toString()) +
	       ", \"driver\": " + jsonString(info.driverVersion) +
	       ", \"software\": " + (info.isSoftware ? "true" : "false") +
	       ", \"dedicatedMemoryBytes\": " + std::to_string(info.dedicatedMemoryBytes) +
	       ", \"allocates\": " + jsonArray(c.allocates, kinds) +
	       ", \"exports\": " + jsonArray(c.exports, kinds) +
	       ", \"imports\": " + jsonArray(c.imports, kinds) +
	       ", \"routes\": " + jsonArray(c.routes, importRouteName) +
	       ", \"drmModifiers\": " + jsonArray(c.drmModifiers, modifierName) +
	       ", \"fenceExports\": " + jsonArray(c.fenceExports, syncs) +
	       ", \"fenceImports\": " + jsonArray(c.fenceImports, syncs) +
	       ", \"cpuMap\": " + (c.cpuMap ? "true" : "false") +
	       ", \"gpuCopy\": " + (c.gpuCopy ? "true" : "false") + ", \"formats\": {";
	bool first = true;
	for (FrameStorage storage :
	     { FrameStorage::Buffer, FrameStorage::LinearImage, FrameStorage::OptimalImage }) {
		out += std::string(first ? "" : ", ") + jsonString(frameStorageName(storage)) +
		       ": " + jsonArray(b.supportedFormats(storage), formatName);
		first = false;
	}
	return out + "}}";
}

// The --json document's schema number (see main).
constexpr int kJsonSchema = 1;

int usage(FILE *to)
{
	std::fputs(
		_("Usage: gpuhandle-info [--json] [--no-matrix] [--no-bridges] [--version] [--help]\n"
		  "Lists the devices each gpuhandle backend opens here, which are the same physical GPU,\n"
		  "and the route a frame takes from each backend into each other one (measured by\n"
		  "importing small frames of NV12, YUV420P, P010LE, RGBA and V210).\n"
		  "With GStreamer, also the path a frame takes through gpuhandleupload !\n"
		  "gpuhandledownload between each pair of GStreamer memory types (measured by\n"
		  "running the pipeline).\n"
		  "\n"
		  "  --json        the same report as one JSON document (with its schema and version)\n"
		  "  --no-matrix   leave out the routes between backends\n"
		  "  --no-bridges  leave out the GStreamer memory bridges\n"
		  "  --version     the program's version\n"
		  "  --help        this text\n"),
		to);
	return to == stdout ? 0 : 2;
}

} // namespace

int main(int argc, char **argv)
{
	i18n::initProgram(); // the text report and usage are translated, --json is not
	bool json = false;
	bool matrix = true;
	bool bridges = true;
	for (int i = 1; i < argc; ++i) {
		if (!std::strcmp(argv[i], "--json"))
			json = true;
		else if (!std::strcmp(argv[i], "--no-matrix"))
			matrix = false;
		else if (!std::strcmp(argv[i], "--no-bridges"))
			bridges = false;
		else if (program::isHelp(argv[i]))
			return usage(stdout);
		else if (program::isVersion(argv[i]))
			return program::printVersion("gpuhandle-info");
		else {
			program::reportUnknownOption("gpuhandle-info", argv[i]);
			return usage(stderr);
		}
	}

	// Before any backend starts a thread: it may set GStreamer's GL variables.
	const info::GlDisplay glDisplay = bridges ? info::chooseGlDisplay() : info::GlDisplay{};
	std::vector<BackendProbe> probes = probeBackends();
	std::vector<BackendRef> open;
	for (const BackendProbe &probe : probes)
		if (probe.backend)
			open.push_back(probe.backend);

	// Which opened devices are one physical device (a software device counts as its own GPU).
	std::vector<std::pair<size_t, size_t>> same;
	for (size_t a = 0; a < open.size(); ++a)
		for (size_t b = a + 1; b < open.size(); ++b)
			if (!open[a]->deviceId().isCpu &&
			    sameDevice(open[a]->deviceId(), open[b]->deviceId()) ==
				    DeviceMatch::Same)
				same.emplace_back(a, b);

	std::vector<Pair> pairs;
	if (matrix)
		for (size_t from = 0; from < open.size(); ++from)
			for (size_t into = 0; into < open.size(); ++into)
				if (from != into)
					pairs.push_back(measure(open, from, into));

	const std::vector<info::Bridge> measured = bridges ? info::measureBridges()
							   : std::vector<info::Bridge>{};

	if (json) {
		// schema: 1 + the number of changes a reader must know of (a field renamed, removed
		// or given another meaning); new fields do not change it.
		std::printf("{\n  \"schema\": %d,\n  \"version\": %s,\n  \"backends\": [\n",
			    kJsonSchema, jsonString(GPUHANDLE_VERSION).c_str());
		for (size_t i = 0; i < probes.size(); ++i)
			std::printf("    %s%s\n", backendJson(probes[i]).c_str(),
				    i + 1 < probes.size() ? "," : "");
		std::printf("  ],\n  \"sameDevice\": [");
		for (size_t i = 0; i < same.size(); ++i)
			std::printf(
				"%s[%s, %s]", i ? ", " : "",
				jsonString(backendKindName(open[same[i].first]->kind())).c_str(),
				jsonString(backendKindName(open[same[i].second]->kind())).c_str());
		std::printf("],\n  \"matrix\": [");
		for (size_t p = 0; p < pairs.size(); ++p) {
			const Pair &pair = pairs[p];
			std::printf(
				"%s\n    {\"from\": %s, \"into\": %s, \"commonFormats\": %zu, \"paths\": [",
				p ? "," : "",
				jsonString(backendKindName(open[pair.from]->kind())).c_str(),
				jsonString(backendKindName(open[pair.into]->kind())).c_str(),
				pair.commonFormats);
			for (size_t c = 0; c < pair.cells.size(); ++c) {
				const Cell &cell = pair.cells[c];
				std::printf("%s{\"format\": %s", c ? ", " : "",
					    jsonString(pixelFormatName(cell.format)).c_str());
				if (cell.ok)
					std::printf(
						", \"route\": %s, \"path\": %s, \"reason\": %s}",
						jsonString(importRouteName(cell.route)).c_str(),
						jsonString(executionPathKindName(cell.path.kind()))
							.c_str(),
						jsonString(cell.path.reason()).c_str());
				else
					std::printf(", \"error\": %s}",
						    jsonString(cell.why).c_str());
			}
			std::printf("]}");
		}
		std::printf("%s],\n  \"glDisplay\": %s,\n  \"bridges\": %s,\n  \"budget\": %s\n}\n",
			    pairs.empty() ? "" : "\n  ", info::glDisplayJson(glDisplay).c_str(),
			    info::bridgesJson(measured).c_str(),
			    info::budgetJson(info::budgetUse()).c_str());
		return 0;
	}

	std::printf("%s\n", _("Backends"));
	for (const BackendProbe &probe : probes)
		printBackendText(probe);
	std::printf("\n%s\n", _("Same physical device"));
	if (same.empty())
		std::printf("  %s\n", _("(none of the opened GPU devices share an identity)"));
	for (auto [a, b] : same)
		std::printf(_("  %s and %s: %s\n"), backendKindName(open[a]->kind()),
			    backendKindName(open[b]->kind()),
			    open[a]->deviceId().toString().c_str());
	if (bridges) {
		info::printBridgesText(measured, glDisplay);
		info::printBudgetText(info::budgetUse());
	}
	if (!matrix)
		return 0;
	std::printf(
		_("\nImport matrix (route a frame takes from the row's backend into the column's, "
		  "measured with %s; * = a copy)\n"),
		pixelFormatName(kMatrixFormats[0]));
	// TRANSLATORS: the matrix's corner cell: rows are sources, columns targets (8 columns).
	std::printf("%-8s", _("from\\to"));
	for (const BackendRef &b : open)
		std::printf(" %-14s", backendKindName(b->kind()));
	std::printf("\n");
	for (size_t from = 0; from < open.size(); ++from) {
		std::printf("%-8s", backendKindName(open[from]->kind()));
		for (size_t into = 0; into < open.size(); ++into) {
			std::string text = "-";
			for (const Pair &pair : pairs)
				if (pair.from == from && pair.into == into && !pair.cells.empty()) {
					const Cell &cell = pair.cells.front();
					text = cell.ok ? std::string(importRouteName(cell.route)) +
								 (cell.path.isCopy() ? "*" : "")
						       : _("fails");
				}
			std::printf(" %-14s", text.c_str());
		}
		std::printf("\n");
	}
	std::printf("\n%s\n", _("Per format (from -> into: format route ...)"));
	for (const Pair &pair : pairs) {
		std::printf(P_("  %s -> %s (%zu format in common):",
			       "  %s -> %s (%zu formats in common):", pair.commonFormats),
			    backendKindName(open[pair.from]->kind()),
			    backendKindName(open[pair.into]->kind()), pair.commonFormats);
		for (const Cell &cell : pair.cells)
			std::printf(" %s %s", pixelFormatName(cell.format),
				    cell.ok ? (std::string(importRouteName(cell.route)) +
					       (cell.path.isCopy() ? "*" : ""))
						      .c_str()
					    : _("fails"));
		std::printf("\n");
		for (const Cell &cell : pair.cells)
			if (!cell.ok && cell.why != "not held by both")
				std::printf("      %s: %s\n", pixelFormatName(cell.format),
					    cell.why.c_str());
	}
	return 0;
}
