# FIOPS: build the patched kernel, boot it in QEMU on a throttled NVMe
# device, and measure per-task IOPS shares.  `make help` lists the targets.

PYTHON  ?= /usr/bin/python3
BUILD   ?= $(CURDIR)/build
RESULTS ?= $(CURDIR)/results
export BUILD RESULTS PYTHON

# Bench parameters; defaults live in bench/params.py and the README.
BENCH_VARS := SCHED TUNE WORKLOAD IOPS DEPTH NR_REQUESTS RUNTIME RAMP VCPUS ACCEL \
	IOQPAIRS IDLE CAL_RUNTIME MEM TIMEOUT
export $(BENCH_VARS)

.PHONY: help deps kernel guest bench calibrate kunit test lint clean

help:
	@echo "make bench SCHED=fiops   build, boot and measure one scheduler"
	@echo "make test                host tests, KUnit, lint and guest smoke tests"
	@echo "make calibrate           unthrottled ceilings per scheduler and guest setting"
	@echo "make kunit               boot the kernel once to run the FIOPS KUnit suite"
	@echo "make deps | kernel | guest | lint | clean"

deps:
	@sh bench/deps.sh

kernel: deps
	@sh bench/kernel.sh

guest: deps
	@sh guest/mkinitramfs.sh

bench: kernel guest
	@$(PYTHON) bench/bench.py

calibrate: kernel guest
	@$(PYTHON) bench/calibrate.py

kunit: kernel
	@$(PYTHON) bench/kunit.py $(BUILD)/linux/arch/x86/boot/bzImage fiops

lint: kernel
	@sh bench/lint.sh

test: lint guest
	@$(PYTHON) bench/tests/run.py

clean:
	rm -rf $(BUILD)
