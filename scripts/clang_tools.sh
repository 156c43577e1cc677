# clang_tools.sh: sourced by format.sh and lint.sh. find_clang_tool NAME prints the path of
# clang-format or clang-tidy: version 14 (Debian 12's, which .clang-format was tuned with and
# CI runs) when installed under its versioned name, else the one on the PATH. Other versions
# may format a few constructs differently.
find_clang_tool() {
    local name=$1
    if command -v "$name-14" >/dev/null 2>&1; then
        command -v "$name-14"
    elif command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
    else
        echo "$name not found (Debian: apt-get install $name, or bash scripts/setup_debian.sh)" >&2
        return 1
    fi
}
