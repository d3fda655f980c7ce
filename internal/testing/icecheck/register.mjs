import { register } from 'node:module'

if (process.env.ICECHECK_NO_PATCH !== '1') register('./hooks.mjs', import.meta.url)
