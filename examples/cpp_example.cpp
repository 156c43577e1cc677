// cpp_example.cpp: gemm from C++: typed overloads on std::vector, matrix views, half-precision
// inputs with a float result, a scoped backend choice and error handling with gemm::status.
#include <cstdio>
#include <vector>

#include <gemm/gemm.hpp>

int main() {
    const int64_t m = 2, n = 2, k = 3;
    std::vector<float> a = {1, 2, 3, 4, 5, 6};     // 2 x 3, row-major
    std::vector<float> b = {7, 8, 9, 10, 11, 12};  // 3 x 2, row-major
    std::vector<float> c(m * n, 0.0f);

    // C = A * B with sizes spelled out, as with cblas_sgemm.
    gemm::status s = gemm::gemm<float, float>(gemm::layout::row_major, gemm::op::n, gemm::op::n, m, n, k, 1.0f,
                                              a.data(), k, b.data(), n, 0.0f, c.data(), n);
    if (!s) {
        std::fprintf(stderr, "gemm failed: %s\n", s.message.c_str());
        return 1;
    }
    std::printf("C = A * B = [%g %g; %g %g]\n", c[0], c[1], c[2], c[3]);
    if (c != std::vector<float>{58, 64, 139, 154}) return 1;

    // The same with matrix views: sizes come from the views and are checked against each other.
    gemm::matrix_view<const float> av{a.data(), m, k, k, gemm::layout::row_major};
    gemm::matrix_view<const float> bv{b.data(), k, n, n, gemm::layout::row_major};
    gemm::matrix_view<float> cv{c.data(), m, n, n, gemm::layout::row_major};
    s = gemm::gemm<float, float>(2.0f, av, gemm::op::n, bv, gemm::op::n, -1.0f, cv);  // C = 2AB - C
    if (!s || c != std::vector<float>{58, 64, 139, 154}) return 1;

    // Half-precision inputs, accumulated in float, written as float.
    std::vector<gemm::half> ah, bh;
    for (float x : a) ah.emplace_back(x);
    for (float x : b) bh.emplace_back(x);
    std::vector<float> ch(m * n);
    s = gemm::gemm<gemm::half, float>(gemm::layout::row_major, gemm::op::n, gemm::op::n, m, n, k, 1.0f, ah.data(), k,
                                      bh.data(), n, 0.0f, ch.data(), n);
    if (!s || ch != c) return 1;

    // Force the reference backend for this scope only (e.g. to compare against it).
    {
        gemm::scoped_backend reference("cpu_ref");
        if (!reference.ok()) {
            std::fprintf(stderr, "%s\n", reference.result().message.c_str());
            return 1;
        }
        std::printf("inside the scope the backend is %s\n", gemm_get_backend());
    }
    std::printf("after it: %s\n", gemm_get_backend());

    // Mismatched views are caught before any computing; the status says what is wrong.
    gemm::matrix_view<float> wrong{c.data(), n, m + 1, m + 1, gemm::layout::row_major};
    s = gemm::gemm<float, float>(1.0f, av, gemm::op::n, bv, gemm::op::n, 0.0f, wrong);
    std::printf("expected failure: %s\n", s.message.c_str());
    return s.code == GEMM_STATUS_INVALID_SIZE ? 0 : 1;
}
