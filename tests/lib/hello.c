/* tests/lib/hello.c — a user's first program against the installed
 * libgeotrain (tests/lib_test.sh builds it with `pkg-config geotrain`):
 * replays a plan, prints the iteration time and energy, then shows that a
 * bad input comes back as a message, not a crash. */
#include <geotrain.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: hello TOPO MODEL PLAN\n");
        return 2;
    }
    geotrain_job j = GEOTRAIN_JOB_INIT;
    j.topology = argv[1];
    j.model = argv[2];
    j.batch = 1024;
    geotrain_result *r;
    int rc = geotrain_simulate(&j, argv[3], &r);
    if (rc != GEOTRAIN_OK) {
        fprintf(stderr, "hello: %s: %s\n", geotrain_strerror(rc), geotrain_result_error(r));
        geotrain_result_free(r);
        return 1;
    }
    printf("version %s\niteration_s %.9g\nenergy_j %.9g\n", geotrain_version(),
           geotrain_result_iteration_s(r), geotrain_result_energy_j(r));
    geotrain_result_free(r);
    j.model = "no-such-model";
    rc = geotrain_simulate(&j, argv[3], &r);
    printf("bad model: status %d (%s): %s\n", rc, geotrain_strerror(rc),
           geotrain_result_error(r));
    int ok = rc == GEOTRAIN_EINPUT && strstr(geotrain_result_error(r), "no-such-model") &&
             geotrain_result_json(r) == NULL;
    geotrain_result_free(r);
    return ok ? 0 : 1;
}
