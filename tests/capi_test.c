/* The C API from C: a program that links libgpumap.so and uses it on a simulated host.
 * usage: capi_test   (run by ctest from the build folder; exits 0 when every check passed) */
#define _GNU_SOURCE
#include <gpumap/gpumap.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(cond, ...)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, "\n  last error: %s\n", gpumap_last_error()); \
      ++failures;                                       \
    }                                                   \
  } while (0)

static int contains(const char* text, const char* part) { return text && strstr(text, part) != NULL; }

/* Hostile input (issue 20 point 1): a raw byte, deep nesting and absurd numbers come back as
 * GPUMAP_USAGE with a last error that is itself valid, printable JSON; the caller lives on. */
static void hostile_input(gpumap_session* s) {
  gpumap_session* bad = NULL;
  CHECK(gpumap_open("{\"simulate\": \"\xff\"}", &bad) == GPUMAP_USAGE && bad == NULL, "a raw byte in gpumap_open");
  CHECK(contains(gpumap_last_error(), "\"code\":2"), "the error is JSON with code 2: %s", gpumap_last_error());
  char* out = NULL;
  CHECK(gpumap_verify(s, "{\"expect\": [\"\xff\"]}", &out) == GPUMAP_USAGE, "a raw byte in gpumap_verify");
  CHECK(gpumap_pin(s, "{\"command\": [\"\xff\"]}", &out) == GPUMAP_USAGE, "a raw byte in gpumap_pin");
  size_t depth = 100000;
  char* deep = malloc(2 * depth + 1);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  deep[2 * depth] = 0;
  CHECK(gpumap_locate(s, deep, &out) == GPUMAP_USAGE, "a list nested 100000 deep in gpumap_locate");
  CHECK(contains(gpumap_last_error(), "levels deep"), "the error says why: %s", gpumap_last_error());
  char* deep_request = malloc(2 * depth + 32);
  snprintf(deep_request, 2 * depth + 32, "{\"expect\": %s}", deep);
  CHECK(gpumap_verify(s, deep_request, &out) == GPUMAP_USAGE, "a list nested 100000 deep in gpumap_verify");
  free(deep_request);
  free(deep);
  const char* numbers[] = {"{\"gpus\": 18446744073709551616}", "{\"gpus\": -1}", "{\"gpus\": 1.5}",
                           "{\"gpus\": true}", "{\"min_free_mib\": 18446744073709551615}", "{\"wait\": 1e308}",
                           "{\"wait\": 1e10}", "{\"wait\": -0.5}", "{\"allow_busy\": 1}"};
  for (size_t i = 0; i < sizeof numbers / sizeof *numbers; ++i) {
    CHECK(gpumap_pin(s, numbers[i], &out) == GPUMAP_USAGE, "refused at the boundary: %s", numbers[i]);
    CHECK(contains(gpumap_last_error(), "must be"), "the error names the bound for %s", numbers[i]);
  }
  CHECK(gpumap_diagnose(s, "{\"current_device\": -3}", &out) == GPUMAP_USAGE, "a negative current_device");
  CHECK(gpumap_diagnose(s, "[]", &out) == GPUMAP_USAGE, "a diagnose request that is not an object");
}

/* Live truth from C (issue 19): CUDA started in this process under CUDA_VISIBLE_DEVICES=3 (the fake
 * libcuda, as torch would start the real one), then the variable changed to 5.  Every call answers
 * with what CUDA really uses.  Runs last: a started CUDA stays started in this process. */
static void live_after_cuinit(void) {
  gpumap_session* s = NULL;
  CHECK(gpumap_open("{\"simulate\": \"dgx8\"}", &s) == GPUMAP_OK, "open dgx8");
  setenv("GPUMAP_FAKE_HOST", GPUMAP_TEST_BUILD_DIR "/hosts/dgx8.json", 1);
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  char* out = NULL;
  CHECK(gpumap_devices(s, &out) == GPUMAP_OK && contains(out, "\"source\":\"predicted\""), "predicted before cuInit");
  gpumap_free(out);
  void* cuda = dlopen(GPUMAP_TEST_BUILD_DIR "/sim/libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  CHECK(cuda != NULL, "load the fake libcuda: %s", dlerror());
  if (!cuda) return;
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
  CHECK(init && init(0) == 0, "cuInit");
  CHECK(gpumap_cuda_initialized() == 1, "CUDA is initialised now");
  setenv("CUDA_VISIBLE_DEVICES", "5", 1);
  int rc = gpumap_devices(s, &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"source\":\"live\"") && contains(out, "\"nvml_index\":3") &&
            !contains(out, "\"nvml_index\":5") && contains(out, "set-too-late"),
        "devices are live: %d %s", rc, out);
  gpumap_free(out);
  CHECK(gpumap_verify(s, "{\"expect\": [3]}", &out) == GPUMAP_OK, "verify the GPU CUDA uses");
  gpumap_free(out);
  out = NULL;
  CHECK(gpumap_verify(s, "{\"expect\": [5]}", &out) == GPUMAP_MISMATCH, "verify the late value's GPU");
  CHECK(contains(gpumap_last_error(), "already runs in this process"), "the mismatch says why");
  gpumap_free(out);
  rc = gpumap_diagnose(s, NULL, &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"id\":\"set-too-late\"") && contains(out, "CUDA_VISIBLE_DEVICES=5 "),
        "diagnose names set-too-late with a relaunch fix: %s", out);
  gpumap_free(out);
  CHECK(gpumap_pin(s, "{\"gpus\": 1}", NULL) == GPUMAP_TOO_LATE, "pin is too late");
  gpumap_close(s);
  unsetenv("GPUMAP_FAKE_HOST");
}

int main(void) {
  char lock_dir[] = "/tmp/gpumap-capi-XXXXXX";
  if (!mkdtemp(lock_dir)) return 2;
  char options[512];
  snprintf(options, sizeof options, "{\"simulate\": \"h200x2\", \"lock_dir\": \"%s\"}", lock_dir);
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CUDA_DEVICE_ORDER");

  CHECK(gpumap_api_version() == GPUMAP_API_VERSION, "api version %d", gpumap_api_version());
  CHECK(strlen(gpumap_version()) > 0, "empty version");

  gpumap_session* s = NULL;
  CHECK(gpumap_open("{\"simulate\": \"h200x2\", \"colour\": 1}", &s) == GPUMAP_USAGE && s == NULL,
        "an unknown option is refused");
  CHECK(contains(gpumap_last_error(), "colour"), "the error names the option");
  CHECK(gpumap_open("{\"simulate\": \"no-such-host\"}", &s) == GPUMAP_USAGE, "an unknown host is refused");
  CHECK(contains(gpumap_last_error(), "no-such-host"), "the error names the host");
  CHECK(gpumap_open("{\"simulate\": \"h200x2\", \"driver_timeout\": -1}", &s) == GPUMAP_USAGE && s == NULL,
        "a negative driver_timeout is refused");
  CHECK(contains(gpumap_last_error(), "driver_timeout"), "the error names the option");
  CHECK(gpumap_open("{\"simulate\": \"h200x2\", \"driver_timeout\": 2.5}", &s) == GPUMAP_OK && s != NULL,
        "a driver_timeout in seconds is taken: %s", gpumap_last_error());
  gpumap_close(s);
  s = NULL;

  /* The environment option: raw variables, read as the command reads its own (seam variables only). */
  const char* vars = gpumap_environment_variables();
  CHECK(contains(vars, "{\"name\":\"GPUMAP_CACHE_DIR\",") && contains(vars, "\"read_by\":[\"seams\"]") &&
            contains(vars, "\"name\":\"CUDA_VISIBLE_DEVICES\""),
        "gpumap_environment_variables: %s", vars);
  CHECK(gpumap_open("{\"environment\": {\"GPUMAP_SIMULATE\": \"no-such-host\"}}", &s) == GPUMAP_USAGE && s == NULL,
        "GPUMAP_SIMULATE in the environment option counts");
  CHECK(contains(gpumap_last_error(), "no-such-host"), "the error names the host: %s", gpumap_last_error());
  CHECK(gpumap_open("{\"environment\": {\"GPUMAP_DRIVER_TIMEOUT\": \"soon\"}}", &s) == GPUMAP_USAGE && s == NULL,
        "GPUMAP_DRIVER_TIMEOUT in the environment option is checked");
  CHECK(contains(gpumap_last_error(), "GPUMAP_DRIVER_TIMEOUT=`soon`"), "the error names the variable: %s", gpumap_last_error());
  CHECK(gpumap_open("{\"environment\": {\"GPUMAP_SIMULATE\": \"h200x2\", \"CUDA_VISIBLE_DEVICES\": \"7\"}}", &s) ==
                GPUMAP_OK && s != NULL,
        "open with an environment: %s", gpumap_last_error());
  gpumap_close(s);
  s = NULL;
  CHECK(gpumap_open("{\"environment\": {\"HOME\": 1}}", &s) == GPUMAP_USAGE && s == NULL, "a value that is no string");

  int rc = gpumap_open(options, &s);
  CHECK(rc == GPUMAP_OK && s != NULL, "open: %d", rc);
  if (!s) return 1;

  char* out = NULL;
  rc = gpumap_devices(s, &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"cuda_ordinal\":1") && contains(out, "GPU-ef612c2c"), "devices: %s", out);
  gpumap_free(out);

  /* The environment is read at each call. */
  setenv("CUDA_VISIBLE_DEVICES", "GPU-nothing", 1);
  out = NULL;
  rc = gpumap_devices(s, &out);
  CHECK(rc == GPUMAP_CUDA_WOULD_FAIL && out == NULL, "devices with a bad CUDA_VISIBLE_DEVICES: %d", rc);
  CHECK(contains(gpumap_last_error(), "CUDA_ERROR_NO_DEVICE"), "the error names CUDA's error");
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);

  rc = gpumap_verify(s, "{\"expect\": [0]}", &out);
  CHECK(rc == GPUMAP_MISMATCH, "verify 0 with CUDA_VISIBLE_DEVICES=1: %d", rc);
  CHECK(contains(gpumap_last_error(), "\"fix\":{\"CUDA_VISIBLE_DEVICES\":\"GPU-ef612c2c"), "the fix names GPU 0's UUID");
  gpumap_free(out);
  rc = gpumap_verify(s, "{\"expect\": [\"00000000:00:07.0\"]}", NULL);
  CHECK(rc == GPUMAP_OK, "verify by PCI bus id: %d", rc);
  rc = gpumap_verify(s, "{\"expect\": [\"GPU-zzz\"]}", NULL);
  CHECK(rc == GPUMAP_USAGE && contains(gpumap_last_error(), "GPU-zzz"), "a GPU that names nothing: %d", rc);

  rc = gpumap_locate(s, "[0, \"1\"]", &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"cuda_ordinal\":null") && contains(out, "\"cuda_ordinal\":0"), "locate: %s", out);
  gpumap_free(out);
  unsetenv("CUDA_VISIBLE_DEVICES");

  /* One rank of MPICH's Hydra / Intel MPI: the library knows MPI_LOCALRANKID as bind does. */
  setenv("MPI_LOCALRANKID", "1", 1);
  out = NULL;
  rc = gpumap_local_device(s, &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"device\":\"cuda:1\"") && contains(out, "\"variable\":\"MPI_LOCALRANKID\""),
        "local_device with MPI_LOCALRANKID=1: %d %s", rc, out);
  gpumap_free(out);
  setenv("MPI_LOCALRANKID", "2", 1);
  out = NULL;
  rc = gpumap_local_device(s, &out);
  CHECK(rc == GPUMAP_UNAVAILABLE && out == NULL && contains(gpumap_last_error(), "MPI_LOCALRANKID=2") &&
            contains(gpumap_last_error(), "gpumap bind"),
        "a rank past the GPUs: %d", rc);
  unsetenv("MPI_LOCALRANKID");
  out = NULL;
  rc = gpumap_check_devices(s, "{\"items\": [{\"value\": \"cuda:1\"}, {\"value\": \"cpu\"}, {\"value\": 0}]}", &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"cuda_ordinals\":[1,null,0]"), "check_devices: %d %s", rc, out);
  gpumap_free(out);
  rc = gpumap_check_devices(s, "{\"items\": [{\"value\": 2, \"what\": \"device_map['x']\"}]}", &out);
  CHECK(rc == GPUMAP_USAGE && contains(gpumap_last_error(), "\"kind\":\"not-visible\"") &&
            contains(gpumap_last_error(), "\"ordinal\":2"),
        "cuda:2 on two GPUs: %d", rc);
  rc = gpumap_check_devices(s, "{\"items\": [{\"value\": \"cuda:0\", \"role\": \"key\"}]}", &out);
  CHECK(rc == GPUMAP_USAGE && contains(gpumap_last_error(), "not recognized"), "a cuda:N max_memory key: %d", rc);

  hostile_input(s);
  rc = gpumap_diagnose(s, NULL, &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"source\":\"predicted\"") && contains(out, "\"host_gpu_count\":2"),
        "diagnose without a model: %d %s", rc, out);
  gpumap_free(out);

  /* Leases: held by this process, exclusive, released on request. */
  CHECK(gpumap_cuda_initialized() == 0, "CUDA is not initialised here");
  rc = gpumap_pin(s, "{\"gpus\": 1, \"command\": [\"capi_test\"]}", &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"lease\":1") && contains(out, "PCI_BUS_ID"), "pin: %d %s", rc, out);
  gpumap_free(out);
  rc = gpumap_pin(s, "{\"gpus\": 2}", &out);
  CHECK(rc == GPUMAP_UNAVAILABLE, "a second pin of both GPUs: %d", rc);
  /* Issue 43: this process's own lease, named as such (never "leased by pid N (root)"), with what
   * to do about it first. */
  CHECK(contains(gpumap_last_error(), "passed_over") && contains(gpumap_last_error(), "already leased by this process") &&
            !contains(gpumap_last_error(), "leased by pid"),
        "the error names this process's own lease: %s", gpumap_last_error());
  CHECK(contains(gpumap_last_error(), "\"hint\":\"this process already holds them (pin lease 1): reuse that pin") &&
            contains(gpumap_last_error(), "gpumap_release(1)"),
        "the hint says to reuse or release it: %s", gpumap_last_error());
  /* passed_over names each GPU as pick --json does: the device object and its reasons. */
  CHECK(contains(gpumap_last_error(), "\"pci_bus_id\":\"00000000:") && contains(gpumap_last_error(), "\"name\":\"NVIDIA") &&
            contains(gpumap_last_error(), "\"mig\":null,\"reasons\":["),
        "passed_over holds device objects: %s", gpumap_last_error());
  CHECK(gpumap_release(1) == GPUMAP_OK, "release");
  CHECK(gpumap_release(1) == GPUMAP_USAGE, "a second release is refused");
  rc = gpumap_pin(s, "{\"gpus\": 2}", &out);
  CHECK(rc == GPUMAP_OK && contains(out, "\"lease\":2"), "both GPUs after the release: %d", rc);
  gpumap_free(out);
  rc = gpumap_pin(s, "{\"gpus\": 1, \"wait\": 0.3}", NULL);
  CHECK(rc == GPUMAP_UNAVAILABLE && contains(gpumap_last_error(), "waited") &&
            contains(gpumap_last_error(), "already leased by this process"),
        "waiting runs out: %d", rc);
  {
    /* interrupt_fd (issue 34 point 5): a readable descriptor stops a long wait at once, holding
     * nothing, and says so; the byte that woke it is left for the caller. */
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    CHECK(write(p[1], "\2", 1) == 1, "write to the pipe");
    char request[100];
    snprintf(request, sizeof request, "{\"gpus\": 1, \"wait\": 10000, \"interrupt_fd\": %d}", p[0]);
    rc = gpumap_pin(s, request, NULL);
    CHECK(rc == GPUMAP_ERROR && contains(gpumap_last_error(), "\"interrupted\":true") &&
              contains(gpumap_last_error(), "nothing was leased"),
          "a readable interrupt_fd ends the wait: %d", rc);
    char byte = 0;
    CHECK(read(p[0], &byte, 1) == 1 && byte == 2, "the wake-up byte is still there");
    close(p[0]);
    close(p[1]);
    CHECK(gpumap_pin(s, "{\"gpus\": 1, \"interrupt_fd\": -1}", NULL) == GPUMAP_USAGE, "interrupt_fd -1 is refused");
  }
  CHECK(gpumap_pin(s, "{\"gpus\": 1, \"max_util\": 200}", NULL) == GPUMAP_USAGE, "max_util 200 is refused");
  CHECK(gpumap_pin(s, "{\"gpus\": \"two\"}", NULL) == GPUMAP_USAGE, "a malformed request is refused");
  CHECK(gpumap_release(2) == GPUMAP_OK, "release both");

  gpumap_close(s);
  live_after_cuinit();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", lock_dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", lock_dir);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("capi_test: all checks passed\n");
  return failures ? 1 : 0;
}
