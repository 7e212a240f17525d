"""What a request costs the throttled device, under the run's cost model.

The model is meta.json's (and summary.json's) "device_cost_model":
{"iops": IOPS or None (IOPS=off), "bps": BPS or None, "iops_size": IOPS_SIZE
or None}, the QEMU throttling options of the measured device (bench/qemu.py).

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
    the cost is max(u / iops, nbytes / bps), each term only with its limit
    set (iops is None with IOPS=off).  model is the device_cost_model dict;
    missing keys count as off, but for iops, which older models always had.
    """
    iops, iops_size, bps = model["iops"], model.get("iops_size"), model.get("bps")
    units = max(1.0, nbytes / iops_size) if iops_size else 1.0
    return max(units / iops if iops else 0.0, nbytes / bps if bps else 0.0)


PAGE = 4096
SECTOR = 512


def size_scale_for(a, b):
    """FIOPS's size_scale (0..1000) for a device whose time per request of S
    bytes is t(S) = a + b*S (seconds, bytes: make calibrate-size's fit).

    FIOPS charges a request of P 4 KiB pages cost(4k) * (1 + size_scale/1000
    * (P-1)).  t(4096 P) = (a + 4096 b) + 4096 b (P-1), so size_scale/1000 =
    4096 b / (a + 4096 b).  Rounded and clamped to 0..1000, since a fit of
    noisy points can give a slightly negative a or b.  ValueError when the
    fit's t(4 KiB) is not positive: there is no cost to scale.
    """
    t4k = a + PAGE * b
    if t4k <= 0:
        raise ValueError("the fit gives t(4 KiB) = %g s, not a cost" % t4k)
    return min(1000, max(0, round(1000 * PAGE * b / t4k)))


def charges_by_size(model):
    """Whether the device of a run with this device_cost_model charges a
    request by its size (BPS or IOPS_SIZE set).  A run folder from before
    the model was recorded (None) had an IOPS-only device."""
    return bool(model and (model.get("bps") or model.get("iops_size")))


def commands_cost(sectors, model):
    """Device seconds of device commands of these sizes (512-byte sectors)."""
    return sum(request_cost(n * SECTOR, model) for n in sectors)
