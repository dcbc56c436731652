// Translations for the gpuhandle plugin and programs: _(), N_() and P_() over gettext (NLS).
#pragma once

#include "gpuhandle_nls_config.h" // ENABLE_NLS, GPUHANDLE_NLS_PACKAGE, GPUHANDLE_NLS_LOCALEDIR

#include <clocale>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef ENABLE_NLS
#include <libintl.h>
// dgettext, not gettext: the plugin runs inside programs whose text domain is their own. glibc
// declares both with format_arg, so printf-style checks still see through _().
#define _(text) dgettext(GPUHANDLE_NLS_PACKAGE, text)
#define P_(singular, plural, n)                                                                    \
	dngettext(GPUHANDLE_NLS_PACKAGE, singular, plural, static_cast<unsigned long>(n))
#else
#define _(text) (text)
#define P_(singular, plural, n) ((n) == 1 ? (singular) : (plural))
#endif
// Marks a string for xgettext where it is defined; _() translates it where it is shown.
#define N_(text) text

namespace gpuhandle::i18n {

// Where the .mo files are: GPUHANDLE_LOCALEDIR (the build tree's po/, for tests and uninstalled
// runs) or the install prefix's locale dir.
inline const char *localeDir() noexcept
{
	const char *dir = std::getenv("GPUHANDLE_LOCALEDIR");
	return dir && *dir ? dir : GPUHANDLE_NLS_LOCALEDIR;
}

// Binds the domain without choosing it: what the plugin does in plugin_init.
inline void bindDomain() noexcept
{
#ifdef ENABLE_NLS
	bindtextdomain(GPUHANDLE_NLS_PACKAGE, localeDir());
	bind_textdomain_codeset(GPUHANDLE_NLS_PACKAGE, "UTF-8");
#endif
}

// A program's first call: the user's locale for messages and text, but C numbers, because the
// programs pass numbers to FFmpeg and print JSON, which a decimal comma would break.
inline void initProgram() noexcept
{
	std::setlocale(LC_ALL, "");
	std::setlocale(LC_NUMERIC, "C");
	bindDomain();
#ifdef ENABLE_NLS
	textdomain(GPUHANDLE_NLS_PACKAGE);
#endif
}

// printf into a std::string: a translated sentence keeps its values where the language puts them,
// which concatenating English pieces cannot do.
[[gnu::format(printf, 1, 2)]] inline std::string format(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	va_list again;
	va_copy(again, args);
	const int length = std::vsnprintf(nullptr, 0, format, args);
	va_end(args);
	std::string out;
	if (length > 0) {
		out.resize(static_cast<size_t>(length) + 1);
		std::vsnprintf(out.data(), out.size(), format, again);
		out.resize(static_cast<size_t>(length));
	}
	va_end(again);
	return out;
}

} // namespace gpuhandle::i18n
