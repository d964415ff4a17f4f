'use strict'
// Prints what npmtest_test.go expects.
process.stdout.write('hello from ' + require('path').basename(__dirname) + '\n')
