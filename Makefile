# FIOPS: build the patched kernel, boot it in QEMU on a throttled NVMe
# device, and measure per-task IOPS shares.  `make help` lists the targets.

PYTHON  ?= /usr/bin/python3
BUILD   ?= $(CURDIR)/build
RESULTS ?= $(CURDIR)/results
export BUILD RESULTS PYTHON

# Bench parameters; defaults live in bench/params.py and the README.
BENCH_VARS := SCHED TUNE WORKLOAD IOPS BPS IOPS_SIZE DEVICE LATENCY_US DEPTH NR_REQUESTS \
	RUNTIME RAMP VCPUS ACCEL IOQPAIRS IDLE CAL_RUNTIME MEM TIMEOUT KERNEL_ARGS UDEV
export $(BENCH_VARS)

# make compare: the matrix (defaults in bench/compare.py and the README);
# CELLS picks some of its cells, PARTS names the folders compare-merge joins.
COMPARE_VARS := SCHEDS WORKLOADS DEPTHS REPEAT CELLS
export $(COMPARE_VARS)
# make stress: the form, the cases and the kernel (bench/stress.py).
STRESS_VARS := STRESS STRESS_CASES STRESS_KERNEL
export $(STRESS_VARS)
# make overhead's matrix (bench/overhead.py); SCHEDS and REPEAT as above.
OVERHEAD_VARS := JOBS QDS HWQS
export $(OVERHEAD_VARS)
# make report: the compare folder to report on (default: the newest), and
# the make overhead folder for its overhead table (default: the newest, else
# the published one of the series it was last measured on, OVERHEAD_PUBLISHED).
COMPARE ?= $(lastword $(sort $(wildcard $(RESULTS)/*-compare)))
OVERHEAD_PUBLISHED := reports/2026-12-03-overhead/series-24/icount
OVERHEAD ?= $(or $(patsubst %/ratios.csv,%,$(lastword $(sort $(wildcard \
	$(RESULTS)/*-overhead/ratios.csv)))),$(OVERHEAD_PUBLISHED))

.PHONY: help deps kernel kernel-debug guest bench compare compare-cells compare-merge \
	reanalyse report calibrate \
	calibrate-size kunit stress overhead test lint clean

help:
	@echo "make bench SCHED=fiops   build, boot and measure one scheduler"
	@echo "make compare             every scheduler x workload x depth, REPEAT times"
	@echo "make compare-cells       the matrix's cells; make compare CELLS=1-27 runs some"
	@echo "make compare-merge PARTS=\"<folders>\"  join the parts of one matrix"
	@echo "make report              reports/<date>/fairness-report.md from the last compare"
	@echo "make test                host tests, KUnit, lint and guest smoke tests"
	@echo "make calibrate           unthrottled ceilings per scheduler and guest setting"
	@echo "make calibrate-size      device time per request size, and the FIOPS size_scale"
	@echo "make kunit               boot the kernel once to run the FIOPS KUnit suite"
	@echo "make stress              the stress cases on the debug kernel (STRESS=short: bench kernel)"
	@echo "make overhead            IOPS and CPU per request of every scheduler on null_blk"
	@echo "make deps | kernel | guest | lint | clean"

deps:
	@sh bench/deps.sh

kernel: deps
	@sh bench/kernel.sh

# The bench kernel with guest/kernel-debug.config merged in, in build/linux-debug.
kernel-debug: deps
	@FLAVOUR=debug sh bench/kernel.sh

guest: deps
	@sh guest/mkinitramfs.sh

bench: kernel guest
	@$(PYTHON) bench/bench.py

compare: kernel guest
	@$(PYTHON) bench/compare.py

# The matrix's numbered cells (one boot each), for CELLS=... on several machines.
compare-cells:
	@$(PYTHON) bench/compare.py --list

# Join the compare folders PARTS (each of some CELLS of one matrix) into one.
compare-merge: deps
	@test -n "$(PARTS)" || { echo "compare-merge: give PARTS=\"<compare folders>\""; exit 1; }
	@$(PYTHON) bench/compare.py --merge $(PARTS)

# Redo the blktrace analysis of finished runs: RUNS=<run folders>, or every
# run of COMPARE.
reanalyse: deps
	@$(PYTHON) bench/bench.py --reanalyse $(or $(RUNS),$(shell find $(COMPARE) -name summary.json -printf '%h\n'))

report: deps
	@test -n "$(COMPARE)" || { echo "report: no compare folder under $(RESULTS); run make compare"; exit 1; }
	@$(PYTHON) -m analysis.report $(COMPARE) $(if $(OVERHEAD),--overhead $(OVERHEAD))

calibrate: kernel guest
	@$(PYTHON) bench/calibrate.py

# One boot: a random reader per block size on the size-charging device
# (IOPS_SIZE=4096 unless BPS or IOPS_SIZE is given), and the fitted size_scale.
calibrate-size: kernel guest
	@$(PYTHON) bench/calibrate_size.py

# STRESS=full (default) runs on the debug kernel, STRESS=short on the bench
# kernel; STRESS_CASES picks cases.  See bench/stress.py.
stress: guest $(if $(filter short,$(STRESS)),kernel,kernel-debug)
	@$(PYTHON) bench/stress.py

# SCHEDS JOBS QDS HWQS REPEAT RUNTIME CLOCKS ICOUNT_SHIFT ICOUNT_RUNTIME PROFILE:
# see bench/overhead.py.  PROFILE=1 also builds initramfs-perf.cpio.
overhead: kernel guest
	@$(PYTHON) bench/overhead.py

kunit: kernel
	@$(PYTHON) bench/kunit.py $(BUILD)/linux/arch/x86/boot/bzImage fiops

lint: kernel
	@sh bench/lint.sh

test: lint guest
	@$(PYTHON) bench/tests/run.py

clean:
	rm -rf $(BUILD)
