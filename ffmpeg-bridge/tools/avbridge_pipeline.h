// gpuhandle-avbridge's GStreamer side: a pipeline from a description, its bus, its statistics.
#pragma once

#include <gpuhandle/result.h>

#include "avbridge_report.h"

#include <chrono>
#include <memory>
#include <string>

#include <gst/gst.h>

namespace gpuhandle::avbridge {

// Owns a pipeline made with gst_parse_launch; it goes to NULL and is freed with the object.
class Pipeline
{
public:
	// `shown` is the user's part of `description`, for the message. Errors: InvalidArgument
	// with GStreamer's parse error (a missing element, bad syntax).
	static Result<std::unique_ptr<Pipeline>> launch(const std::string &description,
							const std::string &shown);
	~Pipeline();
	Pipeline(const Pipeline &) = delete;
	Pipeline &operator=(const Pipeline &) = delete;

	// The element `name` (borrowed; null when there is none).
	GstElement *element(const char *name) const;
	// Errors: Backend when the pipeline refuses PLAYING (its bus error when it posted one).
	Status play();
	// Handles the bus messages that arrive within `wait`. Errors: Backend with the pipeline's
	// error (element, message and debug details).
	Status poll(std::chrono::milliseconds wait);
	bool eos() const noexcept { return eos_; }
	// Waits, bounded by `timeout`, for EOS. Errors: those of poll(), Timeout.
	Status waitEos(std::chrono::seconds timeout);
	// One note per gpuhandle element of the pipeline: its `stats`.
	void noteStats(Report &report) const;

private:
	explicit Pipeline(GstElement *pipeline);

	GstElement *pipeline_ = nullptr;
	GstBus *bus_ = nullptr;
	bool eos_ = false;
};

} // namespace gpuhandle::avbridge
