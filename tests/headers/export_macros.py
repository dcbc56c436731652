#!/usr/bin/env python3
"""Fails when an installed header declares a function or variable outside a class without its
library's export macro.

Usage: export_macros.py HEADER_DIR...

Every library is built with hidden visibility (gpuhandle/export.h). A class takes its visibility
from the namespace block it is declared in, under GCC and Clang alike, but a free function does
not under Clang: it takes that of the block it is defined in, the source's plain
`namespace gpuhandle {`. So each declaration outside a class, C or C++, names the macro
(GPUHANDLE_API, GPUHANDLE_INTEROP_API, ...) itself; test_exported_symbols checks the other side,
that nothing private is exported. Both branches of every #if are read, so a declaration that only
some builds see is checked in every build. Each declaration without the macro is printed.
"""
import re
import sys
from pathlib import Path

MACRO = re.compile(r'\b(?:GPUHANDLE|GPUHANDLE_INTEROP|GPUHANDLE_GLIB|GPUHANDLE_FFMPEG|'
                   r'GST_GPUHANDLE)_API\b')
# Statements at namespace scope that declare no function or variable of the library.
NOT_DECLARATIONS = re.compile(r'^(?:using|typedef|static_assert|template|friend|class|struct|'
                              r'union|enum|namespace|extern\s+template)\b')
# Definitions in the header itself: nothing to export.
DEFINED_HERE = re.compile(r'\b(?:inline|constexpr|consteval|static)\b')


def strip(text):
    """The text without comments, string contents and preprocessor lines; newlines are kept so
    that offsets still give line numbers."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and text[i:].lstrip(' \t').startswith('#'):
            # A preprocessor line, with its continuations.
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append('\n')
                    i += 2
                    continue
                i += 1
            continue
        if text.startswith('//', i):
            while i < n and text[i] != '\n':
                i += 1
            continue
        if text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = n if end < 0 else end + 2
            out.append('\n' * text.count('\n', i, end))
            i = end
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        line_start = c == '\n' or (line_start and c in ' \t')
        i += 1
    return ''.join(out)


def namespace_declarations(text):
    """(line, statement) for each statement ending in ';' outside any class, function or
    initializer: inside namespace and extern "C" blocks only."""
    scopes = []  # True: a namespace or linkage block; False: anything else
    start = 0  # where the statement being read began
    has_body = False  # the statement holds a brace block (class, enum, initializer)
    parens = 0  # open parentheses of the statement: braces in them are default arguments
    for i, c in enumerate(text):
        at_namespace_scope = all(scopes)
        if c in '()' and at_namespace_scope:
            parens += 1 if c == '(' else -1
        elif c == '{' and parens:
            scopes.append(False)
        elif c == '}' and parens:
            scopes.pop()
        elif c == '{':
            if at_namespace_scope:
                # (GLib's G_BEGIN_DECLS and G_END_DECLS are a linkage block without braces.)
                head = re.sub(r'\bG_(?:BEGIN|END)_DECLS\b', '', text[start:i]).strip()
                if re.match(r'^(?:namespace\b[^;]*|extern\s*""\s*)$', head, re.S):
                    scopes.append(True)
                    start = i + 1
                    continue
                has_body = True
            scopes.append(False)
        elif c == '}':
            was = scopes.pop() if scopes else True
            if was:  # a namespace block ends
                start, has_body = i + 1, False
            elif all(scopes):
                # A function defined in the header ends its statement here; a class, an enum
                # or an initializer goes on to its ';'.
                head = text[start:i]
                before_body = head[:head.find('{')]
                if '(' in before_body and '=' not in before_body.split('(')[0] and \
                        not re.search(r'\b(?:class|struct|union|enum)\b', before_body):
                    start, has_body = i + 1, False
        elif c == ';' and at_namespace_scope:
            statement = ' '.join(text[start:i].split())
            line = text.count('\n', 0, start + len(text[start:i]) - len(text[start:i].lstrip()))
            if not has_body:
                yield line + 1, statement
            start, has_body, parens = i + 1, False, 0


def missing_macro(statement):
    """Whether `statement` declares a function or variable to be exported without the macro."""
    body = re.sub(r'\bG_(?:BEGIN|END)_DECLS\b', '', statement).strip()
    if not body or NOT_DECLARATIONS.match(body) or DEFINED_HERE.search(body):
        return False
    head = body.split('(')[0]
    is_function = '(' in body and '=' not in head
    is_variable = re.match(r'^extern\b', body) is not None
    return (is_function or is_variable) and not MACRO.search(body)


def self_check():
    """The reader itself, on a header with every kind of statement."""
    sample = '''// A sample
#pragma once
#include <x.h>
namespace GPUHANDLE_API gpuhandle {
struct S { void member(); int x = f(1); };
enum class E { A, B };
inline int defined(int a) { return a; }
constexpr int kValue = g(2);
using Alias = int(int);
GPUHANDLE_API int exported(int a);
int missing(int a);
extern const char *missingVariable;
template <typename T> T templated(T t);
namespace detail {
void alsoMissing(const char *s = "a;b{", S options = {});
}
}
G_BEGIN_DECLS
GST_GPUHANDLE_API
GType gst_x_get_type(void);
GType gst_y_get_type(void);
G_END_DECLS
namespace GPUHANDLE_API gpuhandle {
void last();
}
'''
    found = [line for line, s in namespace_declarations(strip(sample)) if missing_macro(s)]
    if found != [11, 12, 15, 21, 24]:
        print('export_macros: the reader found lines %s in its sample, not 11, 12, 15, 21, 24' % found)
        return False
    return True


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    if not self_check():
        return 1
    headers = sorted(h for d in argv for h in Path(d).rglob('*') if h.suffix in ('.h', '.hpp'))
    missing = 0
    for header in headers:
        for line, statement in namespace_declarations(strip(header.read_text(errors='replace'))):
            if missing_macro(statement):
                print('%s:%d: no export macro: %s' % (header, line, statement[:160]))
                missing += 1
    print('export_macros: %d headers, %d declarations without their library\'s export macro' %
          (len(headers), missing))
    return 1 if missing or not headers else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
