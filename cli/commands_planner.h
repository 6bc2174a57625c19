/* commands.h — entry points of the subcommands that live in planner/.
 * Each takes the arguments after its name (argv[0] is the command name) and
 * returns the process exit code (sim/cli.h). */
#ifndef GT_PLANNER_COMMANDS_H
#define GT_PLANNER_COMMANDS_H

int cmd_compare(int argc, char **argv);
int cmd_plan(int argc, char **argv);   /* planner/cmd_plan.c */

#endif
