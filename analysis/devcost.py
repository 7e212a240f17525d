"""What a request costs the throttled device, under the run's cost model.

The model is meta.json's (and summary.json's) "device_cost_model":
{"iops": IOPS, "bps": BPS or None, "iops_size": IOPS_SIZE or None}, the
QEMU throttling options of the measured device (bench/qemu.py).

QEMU's throttle (util/throttle.c, throttle_account) charges every request
to two leaky buckets that drain at their own rate: the I/O bucket gets
`units` I/Os, 1, or size/iops-size when iops-size is set and the request
is larger (a fraction, not rounded), and the bytes bucket gets its size.
A request waits while any bucket is over its burst.  The buckets are
aggregate, over all requests, so the true cost of one request depends on
its neighbours: a 4 KiB request beside 1 MiB ones is held by the bytes
bucket they filled.  request_cost() takes the per-request maximum of the
two buckets' drain times instead; that is exact when all requests are of
one size and an approximation otherwise.
"""


def request_cost(nbytes, model):
    """Device seconds one request of nbytes costs under model.

    I/O units u = max(1, nbytes / iops_size) with iops_size set, else 1;
    the cost is max(u / iops, nbytes / bps), the bytes term only with bps
    set.  model is the device_cost_model dict; missing keys count as off.
    """
    iops_size = model.get("iops_size")
    bps = model.get("bps")
    units = max(1.0, nbytes / iops_size) if iops_size else 1.0
    return max(units / model["iops"], nbytes / bps if bps else 0.0)
