// Structures in the meta bytes: a name and typed fields, written and read without GStreamer's
// text parser.
#include "gstgpuhandlemetabytesio.h"

#include <optional>

namespace gpuhandle::gst::metabytes {

namespace {

enum class FieldType : uint8_t {
	String = 1,
	Int = 2,
	UInt = 3,
	Int64 = 4,
	UInt64 = 5,
	Double = 6,
	Boolean = 7
};

std::optional<FieldType> fieldTypeOf(GType type)
{
	if (type == G_TYPE_STRING)
		return FieldType::String;
	if (type == G_TYPE_INT)
		return FieldType::Int;
	if (type == G_TYPE_UINT)
		return FieldType::UInt;
	if (type == G_TYPE_INT64)
		return FieldType::Int64;
	if (type == G_TYPE_UINT64)
		return FieldType::UInt64;
	if (type == G_TYPE_DOUBLE)
		return FieldType::Double;
	if (type == G_TYPE_BOOLEAN)
		return FieldType::Boolean;
	return std::nullopt;
}

// GStreamer's rule for structure and field names: a letter, then letters, digits and "/-_.:+".
bool validName(const std::string &name)
{
	if (name.empty() || !g_ascii_isalpha(name[0]))
		return false;
	for (char c : name)
		if (!g_ascii_isalnum(c) && !std::strchr("/-_.:+", c))
			return false;
	return true;
}

} // namespace

// Name, u16 field count, then per field: name, type byte, value (strings: u16 length, bytes).
void writeStructure(Writer &w, const GstStructure *s)
{
	w.putString(gst_structure_get_name(s));
	const size_t countAt = w.pos();
	w.put<uint16_t>(0);
	uint16_t count = 0;
	const int fields = gst_structure_n_fields(s);
	for (int i = 0; i < fields && count < UINT16_MAX; ++i) {
		const gchar *name = gst_structure_nth_field_name(s, static_cast<guint>(i));
		const GValue *v = gst_structure_get_value(s, name);
		const std::optional<FieldType> type = fieldTypeOf(G_VALUE_TYPE(v));
		if (!type || (*type == FieldType::String && !g_value_get_string(v)))
			continue;
		w.putString(name);
		w.put<uint8_t>(static_cast<uint8_t>(*type));
		switch (*type) {
		case FieldType::String: w.putString(g_value_get_string(v)); break;
		case FieldType::Int: w.put<int32_t>(g_value_get_int(v)); break;
		case FieldType::UInt: w.put<uint32_t>(g_value_get_uint(v)); break;
		case FieldType::Int64: w.put<int64_t>(g_value_get_int64(v)); break;
		case FieldType::UInt64: w.put<uint64_t>(g_value_get_uint64(v)); break;
		case FieldType::Double: {
			const double d = g_value_get_double(v);
			uint64_t bits;
			std::memcpy(&bits, &d, sizeof bits);
			w.put<uint64_t>(bits);
			break;
		}
		case FieldType::Boolean: w.put<uint8_t>(g_value_get_boolean(v) ? 1 : 0); break;
		}
		count++;
	}
	w.patchU16(countAt, count);
}

GstStructure *readStructure(Reader &r)
{
	const std::string name = r.getString();
	const uint16_t count = r.get<uint16_t>();
	if (!r.ok() || !validName(name))
		return nullptr;
	GstStructure *s = gst_structure_new_empty(name.c_str());
	for (uint16_t i = 0; i < count; ++i) {
		const std::string field = r.getString();
		const uint8_t type = r.get<uint8_t>();
		if (!r.ok() || !validName(field) || gst_structure_has_field(s, field.c_str())) {
			gst_structure_free(s);
			return nullptr;
		}
		GValue v = G_VALUE_INIT;
		bool bad = false;
		switch (FieldType(type)) {
		case FieldType::String: {
			const std::string text = r.getString();
			if (!g_utf8_validate(text.data(), static_cast<gssize>(text.size()),
					     nullptr))
				bad = true;
			g_value_init(&v, G_TYPE_STRING);
			g_value_set_string(&v, text.c_str());
			break;
		}
		case FieldType::Int:
			g_value_init(&v, G_TYPE_INT);
			g_value_set_int(&v, r.get<int32_t>());
			break;
		case FieldType::UInt:
			g_value_init(&v, G_TYPE_UINT);
			g_value_set_uint(&v, r.get<uint32_t>());
			break;
		case FieldType::Int64:
			g_value_init(&v, G_TYPE_INT64);
			g_value_set_int64(&v, r.get<int64_t>());
			break;
		case FieldType::UInt64:
			g_value_init(&v, G_TYPE_UINT64);
			g_value_set_uint64(&v, r.get<uint64_t>());
			break;
		case FieldType::Double: {
			const uint64_t bits = r.get<uint64_t>();
			double d;
			std::memcpy(&d, &bits, sizeof d);
			g_value_init(&v, G_TYPE_DOUBLE);
			g_value_set_double(&v, d);
			break;
		}
		case FieldType::Boolean: {
			const uint8_t b = r.get<uint8_t>();
			bad = b > 1;
			g_value_init(&v, G_TYPE_BOOLEAN);
			g_value_set_boolean(&v, b);
			break;
		}
		default: bad = true; break;
		}
		if (bad || !r.ok() || !G_IS_VALUE(&v)) {
			if (G_IS_VALUE(&v))
				g_value_unset(&v);
			gst_structure_free(s);
			return nullptr;
		}
		gst_structure_take_value(s, field.c_str(), &v);
	}
	return s;
}

} // namespace gpuhandle::gst::metabytes
