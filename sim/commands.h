/* commands.h — entry points of the subcommands that live in sim/.
 * Each takes the arguments after its name (argv[0] is the command name) and
 * returns the process exit code (cli.h). */
#ifndef GT_COMMANDS_H
#define GT_COMMANDS_H

int cmd_topo_show(int argc, char **argv);
int cmd_topo_check(int argc, char **argv);
int cmd_model_show(int argc, char **argv);
int cmd_plan_check(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_validate(int argc, char **argv);

#endif
