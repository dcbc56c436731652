#!/usr/bin/env python3
"""Fails when a gpuhandle library exports a symbol its installed headers do not make public.

Usage: exported_symbols.py HEADER_DIR... -- LIBRARY C_PREFIXES [LIBRARY C_PREFIXES...]
(C_PREFIXES: comma-separated, or - when the library has no C API)

Every library is built with hidden visibility (gpuhandle/export.h); what it exports must be
- a C function or variable named with one of the library's prefixes (gpuhandle_, gst_gpu_handle_),
- a C++ entity of a public namespace (gpuhandle, gpuhandle::gst, gpuhandle::gst::metabytes,
  gpuhandle::ffmpeg) that names no private namespace (detail, vulkan, gl, ...), no anonymous
  namespace and no implementation type the headers mark GPUHANDLE_LOCAL (a pimpl's Impl),
- or a standard-library template instantiated over public types (vague linkage: every library
  that uses std::variant<Frame, Error> carries a weak copy; the dynamic linker keeps one).
The linker's own symbols (_end, __bss_start) are allowed. Each offending symbol is printed.
"""
import re
import subprocess
import sys
from pathlib import Path

PUBLIC_NAMESPACES = {'', '::gst', '::gst::metabytes', '::ffmpeg'}
LINKER_SYMBOLS = {'_end', '_edata', '__bss_start', '_init', '_fini'}
SPECIAL_PREFIXES = ('typeinfo name for ', 'typeinfo for ', 'vtable for ', 'VTT for ',
                    'construction vtable for ', 'guard variable for ', 'non-virtual thunk to ',
                    'virtual thunk to ', 'covariant return thunk to ', 'TLS init function for ',
                    'TLS wrapper function for ', 'reference temporary #0 for ')
# gpuhandle followed by lower-case components then "::": the namespace a name lives in.
NAMESPACE = re.compile(r'\bgpuhandle((?:::[a-z_][a-z0-9_]*)*)::')


def local_types(header_dirs):
    """Names the installed headers declare GPUHANDLE_LOCAL (implementation types)."""
    names = set()
    for d in header_dirs:
        for h in Path(d).rglob('*.h*'):
            names.update(re.findall(r'\b(?:class|struct)\s+GPUHANDLE_LOCAL\s+(\w+)',
                                    h.read_text(errors='replace')))
    return names


def why_private(name, c_prefixes, locals_re):
    """The reason `name` (demangled) must not be exported, or None when it may be."""
    if name in LINKER_SYMBOLS:
        return None
    for prefix in SPECIAL_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    if '::' not in name and '(' not in name:
        if any(name.startswith(p) for p in c_prefixes if p):
            return None
        return 'a C symbol without the library\'s prefix (%s)' % (', '.join(c_prefixes) or 'none')
    if '(anonymous namespace)' in name:
        return 'an anonymous namespace'
    for m in NAMESPACE.finditer(name):
        if m.group(1) not in PUBLIC_NAMESPACES:
            return 'the private namespace gpuhandle%s' % m.group(1)
    found = locals_re.search(name) if locals_re else None
    if found:
        return 'the implementation type %s (GPUHANDLE_LOCAL)' % found.group(1)
    # Whose entity it is: the first qualified name, after any return type of a template.
    head = name[len('decltype(auto) '):] if name.startswith('decltype(auto) ') else name
    head = re.sub(r'^(?:[\w:<>*& ]+ )?(?=[\w:]+::)', '', head.split('(')[0].split('<')[0])
    if head.startswith(('gpuhandle::', 'std::', '__gnu_cxx::')):
        return None
    return 'not in a gpuhandle namespace'


def self_check(locals_re):
    """The classifier itself: names that must be refused and names that must pass."""
    refused = ['gpuhandle::detail::nullHandle(char const*)', 'gpuhandle::vulkan::VulkanDevice::x()',
               'typeinfo for gpuhandle::gst::detail::BufferAnchor', 'initConvert()',
               'gpuhandle::(anonymous namespace)::f()', 'vkCreateDevice', 'some_global']
    allowed = ['gpuhandle::Frame::planes() const', 'gpuhandle_frame_new',
               'vtable for gpuhandle::Backend', 'gpuhandle::gst::videoFormatOf(gpuhandle::PixelFormat)',
               'std::_Sp_counted_base<(__gnu_cxx::_Lock_policy)2>::_M_release()',
               'void std::vector<gpuhandle::Frame>::_M_realloc_insert<gpuhandle::Frame>()',
               'decltype(auto) std::__do_visit<std::monostate, gpuhandle::Error>(gpuhandle::Error&)']
    bad = [n for n in refused if why_private(n, ['gpuhandle_'], locals_re) is None]
    bad += [n for n in allowed if why_private(n, ['gpuhandle_'], locals_re) is not None]
    if bad:
        print('exported_symbols: the classifier is wrong about: ' + '; '.join(bad))
        return False
    return True


def main(argv):
    if '--' not in argv:
        print(__doc__)
        return 2
    split = argv.index('--')
    locals_set = local_types(argv[:split])
    locals_re = re.compile(r'\b(%s)\b' % '|'.join(sorted(locals_set))) if locals_set else None
    if not self_check(locals_re):
        return 1
    failures = 0
    pairs = argv[split + 1:]
    if not pairs or len(pairs) % 2:
        print('exported_symbols: give each library with its C prefixes (or -)')
        return 2
    for path, prefixes in zip(pairs[::2], pairs[1::2]):
        c_prefixes = [p for p in prefixes.split(',') if p and p != '-']
        out = subprocess.run(['nm', '-D', '-C', '--defined-only', path], check=True,
                             capture_output=True, text=True).stdout
        names = [line.split(' ', 2)[2] for line in out.splitlines() if line.count(' ') >= 2]
        private = [(n, why_private(n, c_prefixes, locals_re)) for n in names]
        private = [(n, why) for n, why in private if why]
        print('%s: %d exported, %d private' % (Path(path).name, len(names), len(private)))
        for n, why in private[:50]:
            print('  %s  <- %s' % (n[:200], why))
        if not names:
            print('  nothing exported: is this the library?')
            failures += 1
        failures += len(private)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
