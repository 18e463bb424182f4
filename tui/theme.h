/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Themes: the code names roles, a theme file maps each role to colors and
 * attributes ("header = white blue bold").  Only this file knows colors.
 */
#ifndef LATOP_TUI_THEME_H
#define LATOP_TUI_THEME_H

#include <stdbool.h>
#include <curses.h>

enum role {
	ROLE_HEADER,
	ROLE_METER_LABEL,
	ROLE_METER_VALUE,
	ROLE_METER_WARN,
	ROLE_METER_BAD,
	ROLE_TAB,
	ROLE_TAB_ACTIVE,
	ROLE_TAB_DIM,
	ROLE_QUERY,
	ROLE_TABLE_HEADER,
	ROLE_TABLE_SORT,
	ROLE_ROW,
	ROLE_ROW_DIM,
	ROLE_SELECTION,
	ROLE_STATUS,
	ROLE_STATUS_KEY,
	ROLE_ERROR,
	ROLE_CARET,
	ROLE_PROMPT,
	ROLE_HELP,
	ROLE_HELP_KEY,
	ROLE_HIST_BAR,
	ROLE_HIST_MARK,
	ROLE_BAR_ONCPU,
	ROLE_BAR_OFFCPU,
	ROLE_BAR_RUNQ,
	ROLE_BAR_BLOCK,
	ROLE_BAR_NET,
	ROLE_BAR_MM,
	ROLE_BAR_LOCK,
	ROLE_BAR_SOFTIRQ,
	ROLE_BAR_SLEEP,
	ROLE_BAR_OTHER,
	ROLE_TIMELINE,
	ROLE_COUNT
};

/* Load a theme by name (searched) or path and make it current.  Colors are
 * used only if color is true and the terminal has them.  Problems in the file
 * (unknown role, color...) are returned in *warning as "FILE:LINE: what"
 * (caller frees), quoting no text of the file but a short lower-case role
 * name; the roles not set keep their monochrome defaults.  -1 if the theme
 * cannot be found or read (not a regular file, over 1 MiB), or is mostly not
 * theme lines: the monochrome defaults then apply. */
int theme_load(const char *name, bool color, char **warning);
/* The curses attributes of a role in the current theme. */
attr_t theme_attr(enum role r);
/* The role named "bar_<component>" for a breakdown component, or ROLE_BAR_OTHER. */
enum role theme_bar_role(const char *component);
/* Whether the current theme draws in color (else bars use letters). */
bool theme_has_color(void);
/* The current theme's name. */
const char *theme_name(void);
/* The theme after name in the built-in cycle ('t'). */
const char *theme_next(const char *name);

#endif
