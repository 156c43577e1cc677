# ncu_kernels.awk: from `ncu --metrics gpu__time_duration.sum --print-units base --csv`, one
# line per kernel (by grid and name): its shortest and median duration in microseconds and how
# many launches were profiled, in the order the kernels first ran.
BEGIN { FS = "\",\"" }
$0 ~ /gpu__time_duration/ {
    ns = $NF
    gsub(/[",]/, "", ns)  # "15,360" in ncu's own thousands format
    name = $5
    sub(/\(.*/, "", name)  # the parameter list
    sub(/^void /, "", name)
    gsub(/gemm::<unnamed>::/, "", name)
    key = $9 " " name
    if (!(key in count)) order[++kernels] = key
    times[key, ++count[key]] = ns / 1000
}
END {
    for (i = 1; i <= kernels; ++i) {
        key = order[i]
        n = count[key]
        for (a = 1; a <= n; ++a) sorted[a] = times[key, a]
        for (a = 2; a <= n; ++a)
            for (b = a; b > 1 && sorted[b - 1] > sorted[b]; --b) { t = sorted[b]; sorted[b] = sorted[b - 1]; sorted[b - 1] = t }
        printf "  %8.2f us best, %8.2f median, %d launches: grid %s\n", sorted[1], sorted[int((n + 1) / 2)], n, substr(key, 1, 150)
    }
}
