// makeKeepAlive: a KeepAlive around a C destroy callback (GDestroyNotify style).
#include <gpuhandle/keep_alive.h>

namespace gpuhandle {

namespace {

class CallbackKeepAlive final : public KeepAlive
{
public:
	CallbackKeepAlive(void (*destroy)(void *), void *data, void (*consumed)(void *))
		: destroy_(destroy), consumed_(consumed), data_(data)
	{
	}
	~CallbackKeepAlive() override { destroy_(data_); }
	void markConsumed() noexcept override
	{
		if (consumed_)
			consumed_(data_);
	}

private:
	void (*destroy_)(void *);
	void (*consumed_)(void *);
	void *data_;
};

} // namespace

KeepAliveRef makeKeepAlive(void (*destroy)(void *data), void *data, void (*consumed)(void *data))
{
	if (!destroy)
		return nullptr;
	return std::make_shared<CallbackKeepAlive>(destroy, data, consumed);
}

} // namespace gpuhandle
