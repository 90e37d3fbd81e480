# fbkit_embed_files(OUT_VAR HEADER NAMESPACE FUNCTION FILE...): a generated source (its path
# in OUT_VAR, to add to a library) defining FUNCTION() in NAMESPACE, declared in HEADER, that
# returns the FILEs' contents (util/embedded.h); regenerated when any of them changes.
function(fbkit_embed_files out_var header namespace function)
  set(files ${ARGN})
  list(SORT files)
  string(REPLACE "::" "_" stem "${function}")
  set(output ${CMAKE_CURRENT_BINARY_DIR}/${stem}_embedded.cc)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} "-DFILES=${files}" -DOUTPUT=${output} -DHEADER=${header}
            -DNAMESPACE=${namespace} -DFUNCTION=${function}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${files} ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${function}()"
    VERBATIM)
  set(${out_var} ${output} PARENT_SCOPE)
endfunction()
