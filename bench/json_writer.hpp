// json_writer.hpp: the one JSON writer of the gemm command (bench, info and tune --json):
// nesting, commas, escaping and numbers in one place, so that every file it writes parses.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gemm_cli {

// Writes one JSON document as it goes. In an object, key() comes before each value. A
// container is laid out as a block (one member a line, indented) or on one line (a table
// row); everything inside a one-line container stays on its line. end of the outermost
// container ends the document with a newline.
class json_writer {
public:
    enum class layout { block, line };

    explicit json_writer(std::FILE *out) : out_(out) {}
    json_writer(const json_writer &) = delete;
    json_writer &operator=(const json_writer &) = delete;

    json_writer &begin_object(layout l = layout::block);
    json_writer &end_object();
    json_writer &begin_array(layout l = layout::block);
    json_writer &end_array();
    json_writer &key(const std::string &name);

    json_writer &string(const std::string &text);
    // JSON has no NaN or infinity: those, and figures not known, are null.
    json_writer &number(double v, bool known = true);
    json_writer &integer(int64_t v);
    json_writer &boolean(bool v);
    json_writer &null();

private:
    struct level {
        layout lay;
        bool empty;
    };
    void open(char bracket, layout l);
    void close(char bracket);
    void separate();
    void put(const std::string &text);

    std::FILE *out_;
    std::vector<level> levels_;
    bool after_key_ = false;
};

// text as a JSON string literal: quoted, with quotes, backslashes and control characters
// escaped, and bytes that are not valid UTF-8 replaced by U+FFFD.
std::string json_quote(const std::string &text);

}  // namespace gemm_cli
