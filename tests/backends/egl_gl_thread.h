// Test fixture: a GL thread with a GLES 3 context on surfaceless EGL (llvmpipe) for posted work.
#pragma once

#include <gpuhandle/backends/gl_sync.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>

namespace gpuhandle::test {

// Whether the space-separated extension `list` (null: none) names `name`.
inline bool hasExtension(const char *list, const std::string &name)
{
	std::string padded = " " + std::string(list ? list : "") + " ";
	return padded.find(" " + name + " ") != std::string::npos;
}

// A thread with a config-less GLES 3 context current on a surfaceless EGL display, running
// posted work in order (the host's GL thread, as a GstGLContext's). Made per test: Check forks
// each test, and the driver's threads do not survive a fork.
class EglGlThread
{
public:
	EglGlThread() = default;
	EglGlThread(const EglGlThread &) = delete;
	EglGlThread &operator=(const EglGlThread &) = delete;

	// Empty on success, else why there is no GL here.
	std::string start()
	{
		std::promise<std::string> started;
		auto result = started.get_future();
		thread_ = std::thread([this, &started] {
			std::string why = setUp();
			started.set_value(why);
			if (why.empty())
				loop();
		});
		std::string why = result.get();
		if (!why.empty()) {
			thread_.join();
		}
		return why;
	}

	// Stops the thread once the work queued so far (and any posted meanwhile) ran.
	~EglGlThread()
	{
		if (!thread_.joinable())
			return;
		{
			std::lock_guard<std::mutex> lock(mutex_);
			stop_ = true;
		}
		wake_.notify_all();
		thread_.join();
	}

	// A blocking executor: inline on the GL thread, else waits until the GL thread ran it.
	void run(std::function<void()> work)
	{
		if (std::this_thread::get_id() == thread_.get_id()) {
			work();
			return;
		}
		std::promise<void> ran;
		auto done = ran.get_future();
		post([&work, &ran] {
			work();
			ran.set_value();
		});
		done.get();
	}

	// A posting executor: queues the work and returns.
	void post(std::function<void()> work)
	{
		{
			std::lock_guard<std::mutex> lock(mutex_);
			queue_.push_back(std::move(work));
		}
		wake_.notify_all();
	}

	GlExecutor blocking()
	{
		return [this](std::function<void()> work) { run(std::move(work)); };
	}
	GlExecutor posting()
	{
		return [this](std::function<void()> work) { post(std::move(work)); };
	}

	// A GLsync after a glClear into an offscreen framebuffer, made on the GL thread.
	GLsync clearAndFence()
	{
		GLsync sync = nullptr;
		run([this, &sync] {
			glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
			glClearColor(0.25f, 0.5f, 0.75f, 1.0f);
			glClear(GL_COLOR_BUFFER_BIT);
			sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
		});
		return sync;
	}

	bool isSync(GLsync sync)
	{
		GLboolean is = GL_FALSE;
		run([&is, sync] { is = glIsSync(sync); });
		return is == GL_TRUE;
	}

	EGLDisplay display = EGL_NO_DISPLAY;
	EGLContext context = EGL_NO_CONTEXT;

private:
	std::string setUp()
	{
		const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
		if (!hasExtension(client, "EGL_EXT_platform_base") ||
		    !hasExtension(client, "EGL_MESA_platform_surfaceless"))
			return "EGL has no surfaceless platform (EGL_MESA_platform_surfaceless)";
		auto getPlatformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
			eglGetProcAddress("eglGetPlatformDisplayEXT"));
		display = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY,
					     nullptr);
		if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr))
			return "the surfaceless EGL display did not initialize";
		const char *extensions = eglQueryString(display, EGL_EXTENSIONS);
		if (!hasExtension(extensions, "EGL_KHR_surfaceless_context") ||
		    !(hasExtension(extensions, "EGL_KHR_no_config_context") ||
		      hasExtension(extensions, "EGL_MESA_configless_context")))
			return "the EGL display cannot make config-less surfaceless contexts";
		if (!eglBindAPI(EGL_OPENGL_ES_API))
			return "EGL has no OpenGL ES";
		const EGLint attributes[] = { EGL_CONTEXT_CLIENT_VERSION, 3, EGL_NONE };
		context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
		if (context == EGL_NO_CONTEXT ||
		    !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context))
			return "no GLES 3 context could be made current";
		glGenRenderbuffers(1, &renderbuffer_);
		glBindRenderbuffer(GL_RENDERBUFFER, renderbuffer_);
		glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 256, 256);
		glGenFramebuffers(1, &framebuffer_);
		glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
		glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
					  renderbuffer_);
		if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
			return "the offscreen framebuffer is incomplete";
		return "";
	}

	// Runs posted work until stopped, then what is left (deletes posted by dropped points).
	void loop()
	{
		for (;;) {
			std::unique_lock<std::mutex> lock(mutex_);
			wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
			if (queue_.empty())
				break;
			auto work = std::move(queue_.front());
			queue_.pop_front();
			lock.unlock();
			work();
		}
		glDeleteFramebuffers(1, &framebuffer_);
		glDeleteRenderbuffers(1, &renderbuffer_);
		eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		eglDestroyContext(display, context);
		eglTerminate(display);
		eglReleaseThread();
	}

	std::thread thread_;
	std::mutex mutex_;
	std::condition_variable wake_;
	std::deque<std::function<void()>> queue_;
	bool stop_ = false;
	GLuint renderbuffer_ = 0;
	GLuint framebuffer_ = 0;
};

} // namespace gpuhandle::test
