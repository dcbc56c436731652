#!/usr/bin/python3
"""Writes the element reference (docs/elements.md) from the elements GStreamer registers: for
each plugin and element its metadata, pad templates with their caps, the properties it adds
(type, flags, default, range or values, blurb), its signals and its `stats` fields.

Usage: element_reference.py [--check FILE | --write FILE]
  (nothing)      print the reference
  --write FILE   write it to FILE (ninja -C build update-element-reference)
  --check FILE   exit 1, with a diff, when FILE is not what the elements say now; exit 77 when
                 this GStreamer release or this build's memory types are not FILE's (the caps
                 differ by both)
GST_PLUGIN_PATH must name the build's plugin directory. Run with Debian's python3 (PyGObject).
"""
import difflib
import re
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GObject, Gst  # noqa: E402

PLUGINS = ("gpuhandle", "gpuhandleav")
FLAG_NAMES = [(GObject.ParamFlags.READABLE, "readable"), (GObject.ParamFlags.WRITABLE, "writable"),
              (Gst.PARAM_CONTROLLABLE, "controllable"),
              (Gst.PARAM_MUTABLE_READY, "changeable up to READY"),
              (Gst.PARAM_MUTABLE_PAUSED, "changeable up to PAUSED"),
              (Gst.PARAM_MUTABLE_PLAYING, "changeable in PLAYING")]


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def ours(gtype):
    return GObject.type_name(gtype).startswith("GstGpuHandle")


def describe_value(pspec):
    """The default and the range or the values a property takes, as Markdown."""
    value_type = pspec.value_type
    default = pspec.default_value
    if value_type.is_a(GObject.TYPE_ENUM) or value_type.is_a(GObject.TYPE_FLAGS):
        values = value_type.pytype.__enum_values__ if value_type.is_a(GObject.TYPE_ENUM) else \
            value_type.pytype.__flags_values__
        choices = ", ".join(f"`{v.value_nick}` ({v.value_name})"
                            for _, v in sorted(values.items()))
        return f"`{default.value_nick}`", choices
    if value_type == GObject.TYPE_BOOLEAN:
        return f"`{'true' if default else 'false'}`", "`true`, `false`"
    if hasattr(pspec, "minimum") and hasattr(pspec, "maximum"):
        return f"`{default}`", f"{pspec.minimum} to {pspec.maximum}"
    if value_type == GObject.TYPE_STRING:
        return ("none" if default is None else f"`\"{default}\"`"), "text"
    return "none" if default is None else f"`{default}`", GObject.type_name(value_type)


def element_section(factory):
    element = factory.create(None)
    gtype = element.__gtype__
    lines = [f"### {factory.get_name()}", "",
             f"{factory.get_metadata('long-name')}: {factory.get_metadata('description')}",
             "",
             f"Class `{factory.get_metadata('klass')}`, rank {factory.get_rank()}, "
             f"type `{GObject.type_name(gtype)}` (a `{GObject.type_name(gtype.parent)}`).", "",
             "| Pad | Direction | Presence | Caps |", "| --- | --- | --- | --- |"]
    # The registry lists templates in the order it read them (a fresh scan and a cached
    # registry differ): sink pads first, then by name, so the document does not depend on it.
    templates = sorted(factory.get_static_pad_templates(),
                       key=lambda t: (t.direction != Gst.PadDirection.SINK, t.name_template))
    for template in templates:
        caps = template.get_caps()
        structures = "<br>".join(f"`{cell(caps.get_structure(i).to_string().rstrip(';'))}`"
                                 + (f" ({cell(caps.get_features(i).to_string())})"
                                    if caps.get_features(i) and
                                    not caps.get_features(i).is_any() and
                                    caps.get_features(i).to_string() != "memory:SystemMemory"
                                    else "")
                                 for i in range(caps.get_size())) or "`ANY`"
        lines.append(f"| {template.name_template} | "
                     f"{template.direction.value_nick} | {template.presence.value_nick} | "
                     f"{structures} |")
    lines += ["", f"Properties (besides those of `{GObject.type_name(gtype.parent)}`):", "",
              "| Property | Type | Flags | Default | Range or values | Description |",
              "| --- | --- | --- | --- | --- | --- |"]
    for pspec in sorted(element.list_properties(), key=lambda p: p.name):
        if not ours(pspec.owner_type):
            continue
        flags = ", ".join(name for flag, name in FLAG_NAMES if pspec.flags & flag)
        default, choices = describe_value(pspec)
        lines.append(f"| `{pspec.name}` | `{GObject.type_name(pspec.value_type)}` | {flags} | "
                     f"{cell(default)} | {cell(choices)} | {cell(pspec.blurb)} |")
    signals = [name for t in (gtype,) for name in GObject.signal_list_names(t)]
    lines += ["", "Signals: " + (", ".join(f"`{s}`" for s in signals) if signals else "none") +
              "."]
    stats = element.get_property("stats") if element.find_property("stats") else None
    if stats:
        fields = [f"`{stats.nth_field_name(i)}` "
                  f"({GObject.type_name(stats.get_field_type(stats.nth_field_name(i)))})"
                  for i in range(stats.n_fields())]
        lines += ["", f"`stats` (a `{stats.get_name()}` structure, also posted as an element "
                      "message at EOS): " + ", ".join(fields) + "."]
    return lines


def made_with():
    """The GStreamer release, and the plugins and memory types this build has: the reference
    depends on all three."""
    major, minor, _, _ = Gst.version()
    features = set()
    for name in PLUGINS:
        for factory in Gst.Registry.get().get_feature_list_by_plugin(name):
            if isinstance(factory, Gst.ElementFactory):
                for template in factory.get_static_pad_templates():
                    caps = template.get_caps()
                    for i in range(caps.get_size()):
                        if caps.get_features(i) and not caps.get_features(i).is_any():
                            features.add(caps.get_features(i).to_string())
    plugins = [name for name in PLUGINS if Gst.Registry.get().find_plugin(name)]
    return (f"Made with GStreamer {major}.{minor}, the plugins {', '.join(plugins)} and the "
            f"memory types "
            f"{', '.join(sorted(features))} (caps differ between releases and builds).")


def reference():
    registry = Gst.Registry.get()
    lines = ["# Element reference", "",
             "<!-- Generated by scripts/element_reference.py from the registered elements; do not",
             "     edit. ninja -C build update-element-reference rewrites it, and the test",
             "     element_reference fails when it is stale. -->", "",
             made_with(), ""]
    for name in PLUGINS:
        plugin = registry.find_plugin(name)
        if not plugin:
            continue
        description = plugin.get_description().rstrip(".")
        lines += [f"## Plugin {name}", "",
                  f"{description}. Licence {plugin.get_license()}.", ""]
        factories = sorted((f for f in registry.get_feature_list_by_plugin(name)
                            if isinstance(f, Gst.ElementFactory)), key=lambda f: f.get_name())
        for factory in factories:
            lines += element_section(factory) + [""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv):
    Gst.init(None)
    if not Gst.Registry.get().find_plugin(PLUGINS[0]):
        print("the gpuhandle plugin is not on GST_PLUGIN_PATH", file=sys.stderr)
        return 1
    text = reference()
    if len(argv) == 3 and argv[1] == "--write":
        open(argv[2], "w").write(text)
        return 0
    if len(argv) == 3 and argv[1] == "--check":
        checked_in = open(argv[2]).read()
        theirs = re.search(r"^Made with .*$", checked_in, re.M)
        if not theirs or theirs.group(0) != made_with():
            print(f"SKIP: {argv[2]} says \"{theirs.group(0) if theirs else '?'}\"; this build: "
                  f"\"{made_with()}\"")
            return 77
        if text == checked_in:
            print(f"{argv[2]} matches the registered elements")
            return 0
        sys.stdout.writelines(difflib.unified_diff(checked_in.splitlines(True),
                                                   text.splitlines(True), argv[2], "now"))
        print(f"{argv[2]} is stale: run ninja -C build update-element-reference")
        return 1
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
