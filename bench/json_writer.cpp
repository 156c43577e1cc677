// json_writer.cpp: the JSON writer: separators and indentation, string escaping, numbers.
#include "json_writer.hpp"

#include <cmath>

namespace gemm_cli {
namespace {

// The length of the UTF-8 sequence starting at text[i], or 0 when the bytes there are not
// one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
std::size_t utf8_sequence_length(const std::string &text, std::size_t i) {
    auto byte = [&](std::size_t j) { return j < text.size() ? static_cast<unsigned char>(text[j]) : 0u; };
    unsigned lead = byte(i);
    std::size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                         : lead >= 0xE0 && lead <= 0xEF ? 3
                         : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                        : 0;
    if (length == 0) return 0;
    // The second byte's range is narrower after some leads: that rules out overlong forms,
    // surrogates and code points past U+10FFFF.
    unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t j = 2; j < length; ++j)
        if (byte(i + j) < 0x80 || byte(i + j) > 0xBF) return 0;
    return length;
}

std::string escaped_ascii(unsigned char c) {
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    default: break;
    }
    if (c >= 0x20) return std::string(1, char(c));
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\u%04x", c);
    return esc;
}

}  // namespace

std::string json_quote(const std::string &text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            out += escaped_ascii(c);
            ++i;
        } else if (std::size_t n = utf8_sequence_length(text, i); n > 0) {
            out.append(text, i, n);
            i += n;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    return out + "\"";
}

void json_writer::put(const std::string &text) { std::fputs(text.c_str(), out_); }

// Before a key, or a value that has no key: the comma after the previous member, then a new
// indented line in a block or a space on a line.
void json_writer::separate() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (levels_.empty()) return;
    level &l = levels_.back();
    if (!l.empty) put(",");
    if (l.lay == layout::block) put("\n" + std::string(2 * levels_.size(), ' '));
    else if (!l.empty) put(" ");
    l.empty = false;
}

void json_writer::open(char bracket, layout l) {
    separate();
    bool inside_line = !levels_.empty() && levels_.back().lay == layout::line;
    levels_.push_back({inside_line ? layout::line : l, true});
    put(std::string(1, bracket));
}

void json_writer::close(char bracket) {
    level l = levels_.back();
    levels_.pop_back();
    if (l.lay == layout::block && !l.empty) put("\n" + std::string(2 * levels_.size(), ' '));
    put(std::string(1, bracket));
    if (levels_.empty()) {
        put("\n");
        std::fflush(out_);
    }
}

json_writer &json_writer::begin_object(layout l) {
    open('{', l);
    return *this;
}

json_writer &json_writer::end_object() {
    close('}');
    return *this;
}

json_writer &json_writer::begin_array(layout l) {
    open('[', l);
    return *this;
}

json_writer &json_writer::end_array() {
    close(']');
    return *this;
}

json_writer &json_writer::key(const std::string &name) {
    separate();
    put(json_quote(name) + ": ");
    after_key_ = true;
    return *this;
}

json_writer &json_writer::string(const std::string &text) {
    separate();
    put(json_quote(text));
    return *this;
}

json_writer &json_writer::number(double v, bool known) {
    if (!known || !std::isfinite(v)) return null();
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    separate();
    put(text);
    return *this;
}

json_writer &json_writer::integer(int64_t v) {
    separate();
    put(std::to_string(v));
    return *this;
}

json_writer &json_writer::boolean(bool v) {
    separate();
    put(v ? "true" : "false");
    return *this;
}

json_writer &json_writer::null() {
    separate();
    put("null");
    return *this;
}

}  // namespace gemm_cli
