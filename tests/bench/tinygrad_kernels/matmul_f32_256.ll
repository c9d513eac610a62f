; tinygrad's LLVM IR for gfx1100 (AMDLLVMRenderer; the tinygrad vendored in ../shared/vendor/tinygrad, session 14),
; kernel r_8_4_8_16_4_4_64_4: (a @ b).realize() for two 256x256 float32 tensors, rendered by tools/tinygrad/instruction_survey.py --objects (DEV=NULL:AMDLLVM:gfx1100).
; Output of tinygrad, kept as it rendered it; compile_llvm_ir.py compiles it as tinygrad does.
define amdgpu_kernel void @r_8_4_8_16_4_4_64_4(float* noalias align 32 %data0, float* noalias align 32 %data1, float* noalias align 32 %data2) #0
{
  %reg_0 = alloca [16 x float]
  %v0 = tail call i32 @llvm.amdgcn.workgroup.id.x(); 
  %v1 = tail call i32 @llvm.amdgcn.workgroup.id.y(); 
  %v2 = tail call i32 @llvm.amdgcn.workitem.id.x(); 
  %v3 = tail call i32 @llvm.amdgcn.workitem.id.y(); 
  %v4 = getelementptr inbounds float, float* %reg_0, i32 0
  %v5 = getelementptr inbounds float, float* %reg_0, i32 1
  %v6 = getelementptr inbounds float, float* %reg_0, i32 2
  %v7 = getelementptr inbounds float, float* %reg_0, i32 3
  %v8 = getelementptr inbounds float, float* %reg_0, i32 4
  %v9 = getelementptr inbounds float, float* %reg_0, i32 5
  %v10 = getelementptr inbounds float, float* %reg_0, i32 6
  %v11 = getelementptr inbounds float, float* %reg_0, i32 7
  %v12 = getelementptr inbounds float, float* %reg_0, i32 8
  %v13 = getelementptr inbounds float, float* %reg_0, i32 9
  %v14 = getelementptr inbounds float, float* %reg_0, i32 10
  %v15 = getelementptr inbounds float, float* %reg_0, i32 11
  %v16 = getelementptr inbounds float, float* %reg_0, i32 12
  %v17 = getelementptr inbounds float, float* %reg_0, i32 13
  %v18 = getelementptr inbounds float, float* %reg_0, i32 14
  %v19 = getelementptr inbounds float, float* %reg_0, i32 15
  %v20 = shl i32 %v0, 6
  %v21 = shl i32 %v3, 2
  %v22 = add nsw i32 %v20, %v21
  %v23 = shl i32 %v1, 13
  %v24 = shl i32 %v2, 10
  %v25 = add nsw i32 %v23, %v24
  store float 0.0, float* %v4
  store float 0.0, float* %v5
  store float 0.0, float* %v6
  store float 0.0, float* %v7
  store float 0.0, float* %v8
  store float 0.0, float* %v9
  store float 0.0, float* %v10
  store float 0.0, float* %v11
  store float 0.0, float* %v12
  store float 0.0, float* %v13
  store float 0.0, float* %v14
  store float 0.0, float* %v15
  store float 0.0, float* %v16
  store float 0.0, float* %v17
  store float 0.0, float* %v18
  store float 0.0, float* %v19
  br label %loop_entry_0
loop_entry_0:
  br label %loop_latch_0
loop_latch_0:
  %v42 = phi i32 [ 0, %loop_entry_0 ], [ %v42phi, %loop_footer_0 ]
  %v42phi = add i32 %v42, 1
  %v42cmp = icmp ult i32 %v42, 64
  br i1 %v42cmp, label %loop_body_0, label %loop_exit_0
loop_body_0:
  %v43 = getelementptr inbounds float, float* %reg_0, i32 0
  %v44 = load float, float* %v43
  %v45 = getelementptr inbounds float, float* %reg_0, i32 1
  %v46 = load float, float* %v45
  %v47 = getelementptr inbounds float, float* %reg_0, i32 2
  %v48 = load float, float* %v47
  %v49 = getelementptr inbounds float, float* %reg_0, i32 3
  %v50 = load float, float* %v49
  %v51 = getelementptr inbounds float, float* %reg_0, i32 4
  %v52 = load float, float* %v51
  %v53 = getelementptr inbounds float, float* %reg_0, i32 5
  %v54 = load float, float* %v53
  %v55 = getelementptr inbounds float, float* %reg_0, i32 6
  %v56 = load float, float* %v55
  %v57 = getelementptr inbounds float, float* %reg_0, i32 7
  %v58 = load float, float* %v57
  %v59 = getelementptr inbounds float, float* %reg_0, i32 8
  %v60 = load float, float* %v59
  %v61 = getelementptr inbounds float, float* %reg_0, i32 9
  %v62 = load float, float* %v61
  %v63 = getelementptr inbounds float, float* %reg_0, i32 10
  %v64 = load float, float* %v63
  %v65 = getelementptr inbounds float, float* %reg_0, i32 11
  %v66 = load float, float* %v65
  %v67 = getelementptr inbounds float, float* %reg_0, i32 12
  %v68 = load float, float* %v67
  %v69 = getelementptr inbounds float, float* %reg_0, i32 13
  %v70 = load float, float* %v69
  %v71 = getelementptr inbounds float, float* %reg_0, i32 14
  %v72 = load float, float* %v71
  %v73 = getelementptr inbounds float, float* %reg_0, i32 15
  %v74 = load float, float* %v73
  %v75 = shl i32 %v42, 2
  %v76 = add nsw i32 %v25, %v75
  %v77 = add nsw i32 %v76, 256
  %v78 = getelementptr inbounds float, float* %data1, i32 %v77
  %v79 = load <4 x float>, <4 x float>* %v78
  %v80 = add nsw i32 %v76, 512
  %v81 = getelementptr inbounds float, float* %data1, i32 %v80
  %v82 = load <4 x float>, <4 x float>* %v81
  %v83 = add nsw i32 %v76, 768
  %v84 = getelementptr inbounds float, float* %data1, i32 %v83
  %v85 = load <4 x float>, <4 x float>* %v84
  %v86 = getelementptr inbounds float, float* %data1, i32 %v76
  %v87 = load <4 x float>, <4 x float>* %v86
  %v88 = shl i32 %v42, 10
  %v89 = add nsw i32 %v22, %v88
  %v90 = add nsw i32 %v89, 256
  %v91 = getelementptr inbounds float, float* %data2, i32 %v90
  %v92 = load <4 x float>, <4 x float>* %v91
  %v93 = add nsw i32 %v89, 512
  %v94 = getelementptr inbounds float, float* %data2, i32 %v93
  %v95 = load <4 x float>, <4 x float>* %v94
  %v96 = add nsw i32 %v89, 768
  %v97 = getelementptr inbounds float, float* %data2, i32 %v96
  %v98 = load <4 x float>, <4 x float>* %v97
  %v99 = getelementptr inbounds float, float* %data2, i32 %v89
  %v100 = load <4 x float>, <4 x float>* %v99
  %v101 = extractelement <4 x float> %v79, i32 0
  %v102 = extractelement <4 x float> %v79, i32 1
  %v103 = extractelement <4 x float> %v79, i32 2
  %v104 = extractelement <4 x float> %v79, i32 3
  %v105 = extractelement <4 x float> %v82, i32 0
  %v106 = extractelement <4 x float> %v82, i32 1
  %v107 = extractelement <4 x float> %v82, i32 2
  %v108 = extractelement <4 x float> %v82, i32 3
  %v109 = extractelement <4 x float> %v85, i32 0
  %v110 = extractelement <4 x float> %v85, i32 1
  %v111 = extractelement <4 x float> %v85, i32 2
  %v112 = extractelement <4 x float> %v85, i32 3
  %v113 = extractelement <4 x float> %v87, i32 0
  %v114 = extractelement <4 x float> %v87, i32 1
  %v115 = extractelement <4 x float> %v87, i32 2
  %v116 = extractelement <4 x float> %v87, i32 3
  %v117 = extractelement <4 x float> %v92, i32 0
  %v118 = extractelement <4 x float> %v92, i32 1
  %v119 = extractelement <4 x float> %v92, i32 2
  %v120 = extractelement <4 x float> %v92, i32 3
  %v121 = extractelement <4 x float> %v95, i32 0
  %v122 = extractelement <4 x float> %v95, i32 1
  %v123 = extractelement <4 x float> %v95, i32 2
  %v124 = extractelement <4 x float> %v95, i32 3
  %v125 = extractelement <4 x float> %v98, i32 0
  %v126 = extractelement <4 x float> %v98, i32 1
  %v127 = extractelement <4 x float> %v98, i32 2
  %v128 = extractelement <4 x float> %v98, i32 3
  %v129 = extractelement <4 x float> %v100, i32 0
  %v130 = extractelement <4 x float> %v100, i32 1
  %v131 = extractelement <4 x float> %v100, i32 2
  %v132 = extractelement <4 x float> %v100, i32 3
  %v133 = fmul nsz arcp contract afn float %v113, %v129
  %v134 = fmul nsz arcp contract afn float %v114, %v117
  %v135 = fadd nsz arcp contract afn float %v133, %v134
  %v136 = fmul nsz arcp contract afn float %v115, %v121
  %v137 = fadd nsz arcp contract afn float %v135, %v136
  %v138 = fmul nsz arcp contract afn float %v116, %v125
  %v139 = fadd nsz arcp contract afn float %v137, %v138
  %v140 = fadd nsz arcp contract afn float %v44, %v139
  %v141 = fmul nsz arcp contract afn float %v113, %v130
  %v142 = fmul nsz arcp contract afn float %v114, %v118
  %v143 = fadd nsz arcp contract afn float %v141, %v142
  %v144 = fmul nsz arcp contract afn float %v115, %v122
  %v145 = fadd nsz arcp contract afn float %v143, %v144
  %v146 = fmul nsz arcp contract afn float %v116, %v126
  %v147 = fadd nsz arcp contract afn float %v145, %v146
  %v148 = fadd nsz arcp contract afn float %v46, %v147
  %v149 = fmul nsz arcp contract afn float %v113, %v131
  %v150 = fmul nsz arcp contract afn float %v114, %v119
  %v151 = fadd nsz arcp contract afn float %v149, %v150
  %v152 = fmul nsz arcp contract afn float %v115, %v123
  %v153 = fadd nsz arcp contract afn float %v151, %v152
  %v154 = fmul nsz arcp contract afn float %v116, %v127
  %v155 = fadd nsz arcp contract afn float %v153, %v154
  %v156 = fadd nsz arcp contract afn float %v48, %v155
  %v157 = fmul nsz arcp contract afn float %v113, %v132
  %v158 = fmul nsz arcp contract afn float %v114, %v120
  %v159 = fadd nsz arcp contract afn float %v157, %v158
  %v160 = fmul nsz arcp contract afn float %v115, %v124
  %v161 = fadd nsz arcp contract afn float %v159, %v160
  %v162 = fmul nsz arcp contract afn float %v116, %v128
  %v163 = fadd nsz arcp contract afn float %v161, %v162
  %v164 = fadd nsz arcp contract afn float %v50, %v163
  %v165 = fmul nsz arcp contract afn float %v101, %v129
  %v166 = fmul nsz arcp contract afn float %v102, %v117
  %v167 = fadd nsz arcp contract afn float %v165, %v166
  %v168 = fmul nsz arcp contract afn float %v103, %v121
  %v169 = fadd nsz arcp contract afn float %v167, %v168
  %v170 = fmul nsz arcp contract afn float %v104, %v125
  %v171 = fadd nsz arcp contract afn float %v169, %v170
  %v172 = fadd nsz arcp contract afn float %v52, %v171
  %v173 = fmul nsz arcp contract afn float %v101, %v130
  %v174 = fmul nsz arcp contract afn float %v102, %v118
  %v175 = fadd nsz arcp contract afn float %v173, %v174
  %v176 = fmul nsz arcp contract afn float %v103, %v122
  %v177 = fadd nsz arcp contract afn float %v175, %v176
  %v178 = fmul nsz arcp contract afn float %v104, %v126
  %v179 = fadd nsz arcp contract afn float %v177, %v178
  %v180 = fadd nsz arcp contract afn float %v54, %v179
  %v181 = fmul nsz arcp contract afn float %v101, %v131
  %v182 = fmul nsz arcp contract afn float %v102, %v119
  %v183 = fadd nsz arcp contract afn float %v181, %v182
  %v184 = fmul nsz arcp contract afn float %v103, %v123
  %v185 = fadd nsz arcp contract afn float %v183, %v184
  %v186 = fmul nsz arcp contract afn float %v104, %v127
  %v187 = fadd nsz arcp contract afn float %v185, %v186
  %v188 = fadd nsz arcp contract afn float %v56, %v187
  %v189 = fmul nsz arcp contract afn float %v101, %v132
  %v190 = fmul nsz arcp contract afn float %v102, %v120
  %v191 = fadd nsz arcp contract afn float %v189, %v190
  %v192 = fmul nsz arcp contract afn float %v103, %v124
  %v193 = fadd nsz arcp contract afn float %v191, %v192
  %v194 = fmul nsz arcp contract afn float %v104, %v128
  %v195 = fadd nsz arcp contract afn float %v193, %v194
  %v196 = fadd nsz arcp contract afn float %v58, %v195
  %v197 = fmul nsz arcp contract afn float %v105, %v129
  %v198 = fmul nsz arcp contract afn float %v106, %v117
  %v199 = fadd nsz arcp contract afn float %v197, %v198
  %v200 = fmul nsz arcp contract afn float %v107, %v121
  %v201 = fadd nsz arcp contract afn float %v199, %v200
  %v202 = fmul nsz arcp contract afn float %v108, %v125
  %v203 = fadd nsz arcp contract afn float %v201, %v202
  %v204 = fadd nsz arcp contract afn float %v60, %v203
  %v205 = fmul nsz arcp contract afn float %v105, %v130
  %v206 = fmul nsz arcp contract afn float %v106, %v118
  %v207 = fadd nsz arcp contract afn float %v205, %v206
  %v208 = fmul nsz arcp contract afn float %v107, %v122
  %v209 = fadd nsz arcp contract afn float %v207, %v208
  %v210 = fmul nsz arcp contract afn float %v108, %v126
  %v211 = fadd nsz arcp contract afn float %v209, %v210
  %v212 = fadd nsz arcp contract afn float %v62, %v211
  %v213 = fmul nsz arcp contract afn float %v105, %v131
  %v214 = fmul nsz arcp contract afn float %v106, %v119
  %v215 = fadd nsz arcp contract afn float %v213, %v214
  %v216 = fmul nsz arcp contract afn float %v107, %v123
  %v217 = fadd nsz arcp contract afn float %v215, %v216
  %v218 = fmul nsz arcp contract afn float %v108, %v127
  %v219 = fadd nsz arcp contract afn float %v217, %v218
  %v220 = fadd nsz arcp contract afn float %v64, %v219
  %v221 = fmul nsz arcp contract afn float %v105, %v132
  %v222 = fmul nsz arcp contract afn float %v106, %v120
  %v223 = fadd nsz arcp contract afn float %v221, %v222
  %v224 = fmul nsz arcp contract afn float %v107, %v124
  %v225 = fadd nsz arcp contract afn float %v223, %v224
  %v226 = fmul nsz arcp contract afn float %v108, %v128
  %v227 = fadd nsz arcp contract afn float %v225, %v226
  %v228 = fadd nsz arcp contract afn float %v66, %v227
  %v229 = fmul nsz arcp contract afn float %v109, %v129
  %v230 = fmul nsz arcp contract afn float %v110, %v117
  %v231 = fadd nsz arcp contract afn float %v229, %v230
  %v232 = fmul nsz arcp contract afn float %v111, %v121
  %v233 = fadd nsz arcp contract afn float %v231, %v232
  %v234 = fmul nsz arcp contract afn float %v112, %v125
  %v235 = fadd nsz arcp contract afn float %v233, %v234
  %v236 = fadd nsz arcp contract afn float %v68, %v235
  %v237 = fmul nsz arcp contract afn float %v109, %v130
  %v238 = fmul nsz arcp contract afn float %v110, %v118
  %v239 = fadd nsz arcp contract afn float %v237, %v238
  %v240 = fmul nsz arcp contract afn float %v111, %v122
  %v241 = fadd nsz arcp contract afn float %v239, %v240
  %v242 = fmul nsz arcp contract afn float %v112, %v126
  %v243 = fadd nsz arcp contract afn float %v241, %v242
  %v244 = fadd nsz arcp contract afn float %v70, %v243
  %v245 = fmul nsz arcp contract afn float %v109, %v131
  %v246 = fmul nsz arcp contract afn float %v110, %v119
  %v247 = fadd nsz arcp contract afn float %v245, %v246
  %v248 = fmul nsz arcp contract afn float %v111, %v123
  %v249 = fadd nsz arcp contract afn float %v247, %v248
  %v250 = fmul nsz arcp contract afn float %v112, %v127
  %v251 = fadd nsz arcp contract afn float %v249, %v250
  %v252 = fadd nsz arcp contract afn float %v72, %v251
  %v253 = fmul nsz arcp contract afn float %v109, %v132
  %v254 = fmul nsz arcp contract afn float %v110, %v120
  %v255 = fadd nsz arcp contract afn float %v253, %v254
  %v256 = fmul nsz arcp contract afn float %v111, %v124
  %v257 = fadd nsz arcp contract afn float %v255, %v256
  %v258 = fmul nsz arcp contract afn float %v112, %v128
  %v259 = fadd nsz arcp contract afn float %v257, %v258
  %v260 = fadd nsz arcp contract afn float %v74, %v259
  store float %v140, float* %v43
  store float %v148, float* %v45
  store float %v156, float* %v47
  store float %v164, float* %v49
  store float %v172, float* %v51
  store float %v180, float* %v53
  store float %v188, float* %v55
  store float %v196, float* %v57
  store float %v204, float* %v59
  store float %v212, float* %v61
  store float %v220, float* %v63
  store float %v228, float* %v65
  store float %v236, float* %v67
  store float %v244, float* %v69
  store float %v252, float* %v71
  store float %v260, float* %v73
  br label %loop_footer_0
loop_footer_0:
  br label %loop_latch_0
loop_exit_0:
  %v278 = getelementptr inbounds float, float* %reg_0, i32 0
  %v279 = load float, float* %v278
  %v280 = getelementptr inbounds float, float* %reg_0, i32 1
  %v281 = load float, float* %v280
  %v282 = getelementptr inbounds float, float* %reg_0, i32 2
  %v283 = load float, float* %v282
  %v284 = getelementptr inbounds float, float* %reg_0, i32 3
  %v285 = load float, float* %v284
  %v286 = getelementptr inbounds float, float* %reg_0, i32 4
  %v287 = load float, float* %v286
  %v288 = getelementptr inbounds float, float* %reg_0, i32 5
  %v289 = load float, float* %v288
  %v290 = getelementptr inbounds float, float* %reg_0, i32 6
  %v291 = load float, float* %v290
  %v292 = getelementptr inbounds float, float* %reg_0, i32 7
  %v293 = load float, float* %v292
  %v294 = getelementptr inbounds float, float* %reg_0, i32 8
  %v295 = load float, float* %v294
  %v296 = getelementptr inbounds float, float* %reg_0, i32 9
  %v297 = load float, float* %v296
  %v298 = getelementptr inbounds float, float* %reg_0, i32 10
  %v299 = load float, float* %v298
  %v300 = getelementptr inbounds float, float* %reg_0, i32 11
  %v301 = load float, float* %v300
  %v302 = getelementptr inbounds float, float* %reg_0, i32 12
  %v303 = load float, float* %v302
  %v304 = getelementptr inbounds float, float* %reg_0, i32 13
  %v305 = load float, float* %v304
  %v306 = getelementptr inbounds float, float* %reg_0, i32 14
  %v307 = load float, float* %v306
  %v308 = getelementptr inbounds float, float* %reg_0, i32 15
  %v309 = load float, float* %v308
  %v310_0 = insertelement <4 x float> poison, float %v279, i32 0
  %v310_1 = insertelement <4 x float> %v310_0, float %v281, i32 1
  %v310_2 = insertelement <4 x float> %v310_1, float %v283, i32 2
  %v310 = insertelement <4 x float> %v310_2, float %v285, i32 3
  %v311_0 = insertelement <4 x float> poison, float %v287, i32 0
  %v311_1 = insertelement <4 x float> %v311_0, float %v289, i32 1
  %v311_2 = insertelement <4 x float> %v311_1, float %v291, i32 2
  %v311 = insertelement <4 x float> %v311_2, float %v293, i32 3
  %v312_0 = insertelement <4 x float> poison, float %v295, i32 0
  %v312_1 = insertelement <4 x float> %v312_0, float %v297, i32 1
  %v312_2 = insertelement <4 x float> %v312_1, float %v299, i32 2
  %v312 = insertelement <4 x float> %v312_2, float %v301, i32 3
  %v313_0 = insertelement <4 x float> poison, float %v303, i32 0
  %v313_1 = insertelement <4 x float> %v313_0, float %v305, i32 1
  %v313_2 = insertelement <4 x float> %v313_1, float %v307, i32 2
  %v313 = insertelement <4 x float> %v313_2, float %v309, i32 3
  %v314 = add nsw i32 %v22, %v25
  %v315 = add nsw i32 %v314, 256
  %v316 = getelementptr inbounds float, float* %data0, i32 %v315
  %v317 = add nsw i32 %v314, 512
  %v318 = getelementptr inbounds float, float* %data0, i32 %v317
  %v319 = add nsw i32 %v314, 768
  %v320 = getelementptr inbounds float, float* %data0, i32 %v319
  %v321 = getelementptr inbounds float, float* %data0, i32 %v314
  store <4 x float> %v311, <4 x float>* %v316
  store <4 x float> %v312, <4 x float>* %v318
  store <4 x float> %v313, <4 x float>* %v320
  store <4 x float> %v310, <4 x float>* %v321
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "amdgpu-flat-work-group-size"="1,128" "no-trapping-math"="true" }