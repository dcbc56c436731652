// GlTexture and GlBuffer factories: targets, formats and their consistency, contexts, flavours.
#include <gpuhandle/gl_resources.h>

#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;

namespace {
int g_context;
void *const kContext = &g_context;
constexpr uint32_t kTexture2D = 0x0DE1, kRectangle = 0x84F5, kExternal = 0x8D65, kArray = 0x8C1A;
constexpr uint32_t kRGBA8 = 0x8058, kR16 = 0x822A, kRGBA16F = 0x881A, kRGBA = 0x1908;
constexpr uint32_t kRGBA16UI = 0x8D76, kR8UI = 0x8232;

GlTextureDesc texture(uint32_t target, uint32_t format)
{
	return { .name = 3,
		 .target = target,
		 .internalFormat = format,
		 .width = 1280,
		 .height = 720,
		 .context = kContext,
		 .flavour = GlFlavour::Egl };
}
} // namespace

START_TEST(texture_targets_and_formats_accepted)
{
	ck_assert_ok(GlTexture::create(texture(kTexture2D, kRGBA8)));
	ck_assert_ok(GlTexture::create(texture(kRectangle, kR16)));
	ck_assert_ok(GlTexture::create(texture(kArray, kRGBA16F)));
	ck_assert_ok(GlTexture::create(texture(kTexture2D, kRGBA))); // unsized, from GLES 2 paths
	ck_assert_ok(GlTexture::create(texture(kTexture2D, kRGBA16UI))); // integer on a 2D target
	ck_assert_ok(GlTexture::create(texture(kExternal, 0)));          // the EGLImage decides
	ck_assert_ok(GlTexture::create(texture(kExternal, kRGBA8)));
	auto t = GlTexture::create(texture(kTexture2D, kRGBA8));
	ck_assert(t->desc().flavour == GlFlavour::Egl);
	ck_assert_str_eq(glFlavourName(GlFlavour::Glx), "glx");
}
END_TEST

START_TEST(texture_refusals)
{
	GlTextureDesc d = texture(kTexture2D, kRGBA8);
	d.name = 0;
	ck_assert_error(GlTexture::create(d), ErrorCode::NullHandle, "name");
	ck_assert_error(GlTexture::create(texture(0x0DE0 /* GL_TEXTURE_1D */, kRGBA8)),
			ErrorCode::InvalidArgument, "target");
	ck_assert_error(GlTexture::create(texture(kTexture2D, 0)), ErrorCode::InvalidArgument,
			"internalFormat");
	ck_assert_error(GlTexture::create(texture(kTexture2D, 0x1234)), ErrorCode::InvalidArgument,
			"internalFormat");
	// External samplers read normalised colour: an integer format cannot back them.
	ck_assert_error(GlTexture::create(texture(kExternal, kR8UI)), ErrorCode::InvalidArgument,
			"internalFormat");
	d = texture(kTexture2D, kRGBA8);
	d.width = 0;
	ck_assert_error(GlTexture::create(d), ErrorCode::ZeroSize, "width");
	d = texture(kTexture2D, kRGBA8);
	d.height = 0;
	ck_assert_error(GlTexture::create(d), ErrorCode::ZeroSize, "height");
	d = texture(kTexture2D, kRGBA8);
	d.context = nullptr;
	ck_assert_error(GlTexture::create(d), ErrorCode::NullHandle, "context");
	d = texture(kTexture2D, kRGBA8);
	d.flavour = static_cast<GlFlavour>(9);
	ck_assert_error(GlTexture::create(d), ErrorCode::InvalidArgument, "flavour");
}
END_TEST

START_TEST(buffer_valid_and_refused)
{
	GlBufferDesc d = { .name = 7,
			   .target = 0x88EC /* PIXEL_UNPACK */,
			   .size = 4096,
			   .context = kContext,
			   .flavour = GlFlavour::Glx };
	ck_assert_ok(GlBuffer::create(d));
	GlBufferDesc bad = d;
	bad.name = 0;
	ck_assert_error(GlBuffer::create(bad), ErrorCode::NullHandle, "name");
	bad = d;
	bad.target = 0x0DE1;
	ck_assert_error(GlBuffer::create(bad), ErrorCode::InvalidArgument, "target");
	bad = d;
	bad.size = 0;
	ck_assert_error(GlBuffer::create(bad), ErrorCode::ZeroSize, "size");
	bad = d;
	bad.context = nullptr;
	ck_assert_error(GlBuffer::create(bad), ErrorCode::NullHandle, "context");
	bad = d;
	bad.flavour = static_cast<GlFlavour>(4);
	ck_assert_error(GlBuffer::create(bad), ErrorCode::InvalidArgument, "flavour");
}
END_TEST

START_TEST(factories_touch_no_fd)
{
	int before = gpuhandle::test::openFdCount();
	for (int i = 0; i < 20; ++i) {
		ck_assert(GlTexture::create(texture(kTexture2D, kRGBA8)).ok());
		ck_assert(!GlTexture::create(texture(kExternal, kR8UI)).ok());
		ck_assert(!GlBuffer::create({}).ok());
	}
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-gl");
	TCase *tc = tcase_create("gl");
	tcase_add_test(tc, texture_targets_and_formats_accepted);
	tcase_add_test(tc, texture_refusals);
	tcase_add_test(tc, buffer_valid_and_refused);
	tcase_add_test(tc, factories_touch_no_fd);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
