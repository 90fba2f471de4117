// Test-only template: fills a buffer with VALUE * gid (+1 when PLUS_ONE), in a ${MODE} way.
__kernel void fill(__global int *out) {
    int gid = get_global_id(0);
% if MODE == "twice":
    out[gid] = 2 * ${VALUE} * gid${" + 1" if PLUS_ONE else ""};
% else:
    out[gid] = ${VALUE} * gid${" + 1" if PLUS_ONE else ""};
% endif
}
