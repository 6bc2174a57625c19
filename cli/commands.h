/* commands.h — the entry points of every `geotrain` subcommand (cli/cmd_*.c).
 * Each takes the arguments after its name (argv[0] is the command name) and
 * returns the process exit code (cli/cli.h); geotrain.c dispatches to them. */
#ifndef GT_COMMANDS_H
#define GT_COMMANDS_H

int cmd_topo_show(int argc, char **argv);    /* cli/cmd_topo.c */
int cmd_topo_check(int argc, char **argv);   /* cli/cmd_topo.c */
int cmd_topo_gen(int argc, char **argv);     /* cli/cmd_topo_gen.c */
int cmd_model_show(int argc, char **argv);   /* cli/cmd_model.c */
int cmd_plan_check(int argc, char **argv);   /* cli/cmd_plan_check.c */
int cmd_plan(int argc, char **argv);         /* cli/cmd_plan.c */
int cmd_simulate(int argc, char **argv);     /* cli/cmd_simulate.c */
int cmd_compare(int argc, char **argv);      /* cli/cmd_compare.c */
int cmd_study(int argc, char **argv);        /* cli/cmd_study.c */
int cmd_freq(int argc, char **argv);         /* cli/cmd_freq.c */
int cmd_profile_import(int argc, char **argv); /* cli/cmd_profile_import.c */
int cmd_validate(int argc, char **argv);     /* cli/cmd_validate.c */
int cmd_version(int argc, char **argv);      /* cli/version.c (also --version) */

#endif
