/*
 * flame_assets.S - the flame graph page's own code (ui/web/flame.html,
 * flame.js, flame.css) embedded into the binary at build time, each as a
 * NUL-terminated string: the files stay real HTML/JS/CSS in the tree that
 * can be read, linted and opened as they are, and pmutop needs nothing at
 * run time. flamegraph.c declares the three symbols. The Makefile makes
 * this object depend on ui/web/ (.incbin is invisible to -MMD).
 */
	.section .rodata
	.balign 16

	.globl pmutop_flame_html
	.type pmutop_flame_html, @object
pmutop_flame_html:
	.incbin "ui/web/flame.html"
	.byte 0
	.size pmutop_flame_html, . - pmutop_flame_html

	.globl pmutop_flame_js
	.type pmutop_flame_js, @object
pmutop_flame_js:
	.incbin "ui/web/flame.js"
	.byte 0
	.size pmutop_flame_js, . - pmutop_flame_js

	.globl pmutop_flame_css
	.type pmutop_flame_css, @object
pmutop_flame_css:
	.incbin "ui/web/flame.css"
	.byte 0
	.size pmutop_flame_css, . - pmutop_flame_css

	.section .note.GNU-stack, "", @progbits
